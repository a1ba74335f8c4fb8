// The jupyter_agent panel, built from js/src/panel/ by js/scripts/panel.js
// (`npm run build:panel`). Do not edit: js/test/panel-build.test.ts fails when this
// file is not what the sources give.
var __create = Object.create;
var __defProp = Object.defineProperty;
var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
var __getOwnPropNames = Object.getOwnPropertyNames;
var __getProtoOf = Object.getPrototypeOf;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __commonJS = (cb, mod) => function __require() {
  try {
    return mod || (0, cb[__getOwnPropNames(cb)[0]])((mod = { exports: {} }).exports, mod), mod.exports;
  } catch (e) {
    throw mod = 0, e;
  }
};
var __copyProps = (to, from, except, desc) => {
  if (from && typeof from === "object" || typeof from === "function") {
    for (let key of __getOwnPropNames(from))
      if (!__hasOwnProp.call(to, key) && key !== except)
        __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
  }
  return to;
};
var __toESM = (mod, isNodeMode, target) => (target = mod != null ? __create(__getProtoOf(mod)) : {}, __copyProps(
  // If the importer is in node compatibility mode or this is not an ESM
  // file that has been converted to a CommonJS file using a Babel-
  // compatible transform (i.e. "__esModule" has not been set), then set
  // "default" to the CommonJS "module.exports" for node compatibility.
  isNodeMode || !mod || !mod.__esModule ? __defProp(target, "default", { value: mod, enumerable: true }) : target,
  mod
));

// ../../main/js/node_modules/highlight.js/lib/core.js
var require_core = __commonJS({
  "../../main/js/node_modules/highlight.js/lib/core.js"(exports, module) {
    function deepFreeze(obj) {
      if (obj instanceof Map) {
        obj.clear = obj.delete = obj.set = function() {
          throw new Error("map is read-only");
        };
      } else if (obj instanceof Set) {
        obj.add = obj.clear = obj.delete = function() {
          throw new Error("set is read-only");
        };
      }
      Object.freeze(obj);
      Object.getOwnPropertyNames(obj).forEach((name) => {
        const prop = obj[name];
        const type = typeof prop;
        if ((type === "object" || type === "function") && !Object.isFrozen(prop)) {
          deepFreeze(prop);
        }
      });
      return obj;
    }
    var Response = class {
      /**
       * @param {CompiledMode} mode
       */
      constructor(mode) {
        if (mode.data === void 0) mode.data = {};
        this.data = mode.data;
        this.isMatchIgnored = false;
      }
      ignoreMatch() {
        this.isMatchIgnored = true;
      }
    };
    function escapeHTML(value) {
      return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#x27;");
    }
    function inherit$1(original, ...objects) {
      const result = /* @__PURE__ */ Object.create(null);
      for (const key in original) {
        result[key] = original[key];
      }
      objects.forEach(function(obj) {
        for (const key in obj) {
          result[key] = obj[key];
        }
      });
      return (
        /** @type {T} */
        result
      );
    }
    var SPAN_CLOSE = "</span>";
    var emitsWrappingTags = (node) => {
      return !!node.scope;
    };
    var scopeToCSSClass = (name, { prefix }) => {
      if (name.startsWith("language:")) {
        return name.replace("language:", "language-");
      }
      if (name.includes(".")) {
        const pieces = name.split(".");
        return [
          `${prefix}${pieces.shift()}`,
          ...pieces.map((x, i) => `${x}${"_".repeat(i + 1)}`)
        ].join(" ");
      }
      return `${prefix}${name}`;
    };
    var HTMLRenderer = class {
      /**
       * Creates a new HTMLRenderer
       *
       * @param {Tree} parseTree - the parse tree (must support `walk` API)
       * @param {{classPrefix: string}} options
       */
      constructor(parseTree, options) {
        this.buffer = "";
        this.classPrefix = options.classPrefix;
        parseTree.walk(this);
      }
      /**
       * Adds texts to the output stream
       *
       * @param {string} text */
      addText(text) {
        this.buffer += escapeHTML(text);
      }
      /**
       * Adds a node open to the output stream (if needed)
       *
       * @param {Node} node */
      openNode(node) {
        if (!emitsWrappingTags(node)) return;
        const className = scopeToCSSClass(
          node.scope,
          { prefix: this.classPrefix }
        );
        this.span(className);
      }
      /**
       * Adds a node close to the output stream (if needed)
       *
       * @param {Node} node */
      closeNode(node) {
        if (!emitsWrappingTags(node)) return;
        this.buffer += SPAN_CLOSE;
      }
      /**
       * returns the accumulated buffer
      */
      value() {
        return this.buffer;
      }
      // helpers
      /**
       * Builds a span element
       *
       * @param {string} className */
      span(className) {
        this.buffer += `<span class="${className}">`;
      }
    };
    var newNode = (opts = {}) => {
      const result = { children: [] };
      Object.assign(result, opts);
      return result;
    };
    var TokenTree = class _TokenTree {
      constructor() {
        this.rootNode = newNode();
        this.stack = [this.rootNode];
      }
      get top() {
        return this.stack[this.stack.length - 1];
      }
      get root() {
        return this.rootNode;
      }
      /** @param {Node} node */
      add(node) {
        this.top.children.push(node);
      }
      /** @param {string} scope */
      openNode(scope) {
        const node = newNode({ scope });
        this.add(node);
        this.stack.push(node);
      }
      closeNode() {
        if (this.stack.length > 1) {
          return this.stack.pop();
        }
        return void 0;
      }
      closeAllNodes() {
        while (this.closeNode()) ;
      }
      toJSON() {
        return JSON.stringify(this.rootNode, null, 4);
      }
      /**
       * @typedef { import("./html_renderer").Renderer } Renderer
       * @param {Renderer} builder
       */
      walk(builder) {
        return this.constructor._walk(builder, this.rootNode);
      }
      /**
       * @param {Renderer} builder
       * @param {Node} node
       */
      static _walk(builder, node) {
        if (typeof node === "string") {
          builder.addText(node);
        } else if (node.children) {
          builder.openNode(node);
          node.children.forEach((child) => this._walk(builder, child));
          builder.closeNode(node);
        }
        return builder;
      }
      /**
       * @param {Node} node
       */
      static _collapse(node) {
        if (typeof node === "string") return;
        if (!node.children) return;
        if (node.children.every((el) => typeof el === "string")) {
          node.children = [node.children.join("")];
        } else {
          node.children.forEach((child) => {
            _TokenTree._collapse(child);
          });
        }
      }
    };
    var TokenTreeEmitter = class extends TokenTree {
      /**
       * @param {*} options
       */
      constructor(options) {
        super();
        this.options = options;
      }
      /**
       * @param {string} text
       */
      addText(text) {
        if (text === "") {
          return;
        }
        this.add(text);
      }
      /** @param {string} scope */
      startScope(scope) {
        this.openNode(scope);
      }
      endScope() {
        this.closeNode();
      }
      /**
       * @param {Emitter & {root: DataNode}} emitter
       * @param {string} name
       */
      __addSublanguage(emitter, name) {
        const node = emitter.root;
        if (name) node.scope = `language:${name}`;
        this.add(node);
      }
      toHTML() {
        const renderer = new HTMLRenderer(this, this.options);
        return renderer.value();
      }
      finalize() {
        this.closeAllNodes();
        return true;
      }
    };
    function source(re) {
      if (!re) return null;
      if (typeof re === "string") return re;
      return re.source;
    }
    function lookahead(re) {
      return concat("(?=", re, ")");
    }
    function anyNumberOfTimes(re) {
      return concat("(?:", re, ")*");
    }
    function optional(re) {
      return concat("(?:", re, ")?");
    }
    function concat(...args) {
      const joined = args.map((x) => source(x)).join("");
      return joined;
    }
    function stripOptionsFromArgs(args) {
      const opts = args[args.length - 1];
      if (typeof opts === "object" && opts.constructor === Object) {
        args.splice(args.length - 1, 1);
        return opts;
      } else {
        return {};
      }
    }
    function either(...args) {
      const opts = stripOptionsFromArgs(args);
      const joined = "(" + (opts.capture ? "" : "?:") + args.map((x) => source(x)).join("|") + ")";
      return joined;
    }
    function countMatchGroups(re) {
      return new RegExp(re.toString() + "|").exec("").length - 1;
    }
    function startsWith(re, lexeme) {
      const match = re && re.exec(lexeme);
      return match && match.index === 0;
    }
    var BACKREF_RE = new RegExp(either(
      /\[(?:[^\\\]]|\\.)*\]/,
      // a character class, inside which ( and \ lose their meaning
      /\(\?<(?![=!])[^>]+>/,
      // a named capture group `(?<name>` (not a lookbehind `(?<=` / `(?<!`)
      /\(\?'[^']+'/,
      // a named capture group `(?'name'`
      /\(\??/,
      // an opening parenthesis, capturing or non-capturing / lookahead
      /\\([1-9][0-9]*)/,
      // a backreference like `\1`
      /\\./
      // any other escape sequence
    ));
    function _rewriteBackreferences(regexps, { joinWith }) {
      let numCaptures = 0;
      return regexps.map((regex) => {
        numCaptures += 1;
        const offset = numCaptures;
        let re = source(regex);
        let out = "";
        while (re.length > 0) {
          const match = BACKREF_RE.exec(re);
          if (!match) {
            out += re;
            break;
          }
          out += re.substring(0, match.index);
          re = re.substring(match.index + match[0].length);
          if (match[0][0] === "\\" && match[1]) {
            out += "\\" + String(Number(match[1]) + offset);
          } else {
            out += match[0];
            if (match[0] === "(" || /^\(\?[<']/.test(match[0])) {
              numCaptures++;
            }
          }
        }
        return out;
      }).map((re) => `(${re})`).join(joinWith);
    }
    var MATCH_NOTHING_RE = /\b\B/;
    var IDENT_RE = "[a-zA-Z]\\w*";
    var UNDERSCORE_IDENT_RE = "[a-zA-Z_]\\w*";
    var NUMBER_RE = "\\b\\d+(\\.\\d+)?";
    var C_NUMBER_RE = "(-?)(\\b0[xX][a-fA-F0-9]+|(\\b\\d+(\\.\\d*)?|\\.\\d+)([eE][-+]?\\d+)?)";
    var BINARY_NUMBER_RE = "\\b(0b[01]+)";
    var RE_STARTERS_RE = "!|!=|!==|%|%=|&|&&|&=|\\*|\\*=|\\+|\\+=|,|-|-=|/=|/|:|;|<<|<<=|<=|<|===|==|=|>>>=|>>=|>=|>>>|>>|>|\\?|\\[|\\{|\\(|\\^|\\^=|\\||\\|=|\\|\\||~";
    var SHEBANG = (opts = {}) => {
      const beginShebang = /^#![ ]*\//;
      if (opts.binary) {
        opts.begin = concat(
          beginShebang,
          /.*\b/,
          opts.binary,
          /\b.*/
        );
      }
      return inherit$1({
        scope: "meta",
        begin: beginShebang,
        end: /$/,
        relevance: 0,
        /** @type {ModeCallback} */
        "on:begin": (m, resp) => {
          if (m.index !== 0) resp.ignoreMatch();
        }
      }, opts);
    };
    var BACKSLASH_ESCAPE = {
      begin: "\\\\[\\s\\S]",
      relevance: 0
    };
    var APOS_STRING_MODE = {
      scope: "string",
      begin: "'",
      end: "'",
      illegal: "\\n",
      contains: [BACKSLASH_ESCAPE]
    };
    var QUOTE_STRING_MODE = {
      scope: "string",
      begin: '"',
      end: '"',
      illegal: "\\n",
      contains: [BACKSLASH_ESCAPE]
    };
    var PHRASAL_WORDS_MODE = {
      begin: /\b(a|an|the|are|I'm|isn't|don't|doesn't|won't|but|just|should|pretty|simply|enough|gonna|going|wtf|so|such|will|you|your|they|like|more)\b/
    };
    var COMMENT = function(begin, end, modeOptions = {}) {
      const mode = inherit$1(
        {
          scope: "comment",
          begin,
          end,
          contains: []
        },
        modeOptions
      );
      mode.contains.push({
        scope: "doctag",
        // hack to avoid the space from being included. the space is necessary to
        // match here to prevent the plain text rule below from gobbling up doctags
        begin: "[ ]*(?=(TODO|FIXME|NOTE|BUG|OPTIMIZE|HACK|XXX):)",
        end: /(TODO|FIXME|NOTE|BUG|OPTIMIZE|HACK|XXX):/,
        excludeBegin: true,
        relevance: 0
      });
      const ENGLISH_WORD = either(
        // list of common 1 and 2 letter words in English
        "I",
        "a",
        "is",
        "so",
        "us",
        "to",
        "at",
        "if",
        "in",
        "it",
        "on",
        // note: this is not an exhaustive list of contractions, just popular ones
        /[A-Za-z]+['](d|ve|re|ll|t|s|n)/,
        // contractions - can't we'd they're let's, etc
        /[A-Za-z]+[-][a-z]+/,
        // `no-way`, etc.
        /[A-Za-z][a-z]{2,}/
        // allow capitalized words at beginning of sentences
      );
      mode.contains.push(
        {
          // TODO: how to include ", (, ) without breaking grammars that use these for
          // comment delimiters?
          // begin: /[ ]+([()"]?([A-Za-z'-]{3,}|is|a|I|so|us|[tT][oO]|at|if|in|it|on)[.]?[()":]?([.][ ]|[ ]|\))){3}/
          // ---
          // this tries to find sequences of 3 english words in a row (without any
          // "programming" type syntax) this gives us a strong signal that we've
          // TRULY found a comment - vs perhaps scanning with the wrong language.
          // It's possible to find something that LOOKS like the start of the
          // comment - but then if there is no readable text - good chance it is a
          // false match and not a comment.
          //
          // for a visual example please see:
          // https://github.com/highlightjs/highlight.js/issues/2827
          begin: concat(
            /[ ]+/,
            // necessary to prevent us gobbling up doctags like /* @author Bob Mcgill */
            "(",
            ENGLISH_WORD,
            /[.]?[:]?([.][ ]|[ ])/,
            "){3}"
          )
          // look for 3 words in a row
        }
      );
      return mode;
    };
    var C_LINE_COMMENT_MODE = COMMENT("//", "$");
    var C_BLOCK_COMMENT_MODE = COMMENT("/\\*", "\\*/");
    var HASH_COMMENT_MODE = COMMENT("#", "$");
    var NUMBER_MODE = {
      scope: "number",
      begin: NUMBER_RE,
      relevance: 0
    };
    var C_NUMBER_MODE = {
      scope: "number",
      begin: C_NUMBER_RE,
      relevance: 0
    };
    var BINARY_NUMBER_MODE = {
      scope: "number",
      begin: BINARY_NUMBER_RE,
      relevance: 0
    };
    var REGEXP_MODE = {
      scope: "regexp",
      begin: /\/(?=[^/\n]*\/)/,
      end: /\/[gimuy]*/,
      contains: [
        BACKSLASH_ESCAPE,
        {
          begin: /\[/,
          end: /\]/,
          relevance: 0,
          contains: [BACKSLASH_ESCAPE]
        }
      ]
    };
    var TITLE_MODE = {
      scope: "title",
      begin: IDENT_RE,
      relevance: 0
    };
    var UNDERSCORE_TITLE_MODE = {
      scope: "title",
      begin: UNDERSCORE_IDENT_RE,
      relevance: 0
    };
    var METHOD_GUARD = {
      // excludes method names from keyword processing
      begin: "\\.\\s*" + UNDERSCORE_IDENT_RE,
      relevance: 0
    };
    var END_SAME_AS_BEGIN = function(mode) {
      return Object.assign(
        mode,
        {
          /** @type {ModeCallback} */
          "on:begin": (m, resp) => {
            resp.data._beginMatch = m[1];
          },
          /** @type {ModeCallback} */
          "on:end": (m, resp) => {
            if (resp.data._beginMatch !== m[1]) resp.ignoreMatch();
          }
        }
      );
    };
    var MODES = /* @__PURE__ */ Object.freeze({
      __proto__: null,
      APOS_STRING_MODE,
      BACKSLASH_ESCAPE,
      BINARY_NUMBER_MODE,
      BINARY_NUMBER_RE,
      COMMENT,
      C_BLOCK_COMMENT_MODE,
      C_LINE_COMMENT_MODE,
      C_NUMBER_MODE,
      C_NUMBER_RE,
      END_SAME_AS_BEGIN,
      HASH_COMMENT_MODE,
      IDENT_RE,
      MATCH_NOTHING_RE,
      METHOD_GUARD,
      NUMBER_MODE,
      NUMBER_RE,
      PHRASAL_WORDS_MODE,
      QUOTE_STRING_MODE,
      REGEXP_MODE,
      RE_STARTERS_RE,
      SHEBANG,
      TITLE_MODE,
      UNDERSCORE_IDENT_RE,
      UNDERSCORE_TITLE_MODE
    });
    function skipIfHasPrecedingDot(match, response) {
      const before = match.input[match.index - 1];
      if (before === ".") {
        response.ignoreMatch();
      }
    }
    function scopeClassName(mode, _parent) {
      if (mode.className !== void 0) {
        mode.scope = mode.className;
        delete mode.className;
      }
    }
    function beginKeywords(mode, parent) {
      if (!parent) return;
      if (!mode.beginKeywords) return;
      mode.begin = "\\b(" + mode.beginKeywords.split(" ").join("|") + ")(?!\\.)(?=\\b|\\s)";
      mode.__beforeBegin = skipIfHasPrecedingDot;
      mode.keywords = mode.keywords || mode.beginKeywords;
      delete mode.beginKeywords;
      if (mode.relevance === void 0) mode.relevance = 0;
    }
    function compileIllegal(mode, _parent) {
      if (!Array.isArray(mode.illegal)) return;
      mode.illegal = either(...mode.illegal);
    }
    function compileMatch(mode, _parent) {
      if (!mode.match) return;
      if (mode.begin || mode.end) throw new Error("begin & end are not supported with match");
      mode.begin = mode.match;
      delete mode.match;
    }
    function compileRelevance(mode, _parent) {
      if (mode.relevance === void 0) mode.relevance = 1;
    }
    var beforeMatchExt = (mode, parent) => {
      if (!mode.beforeMatch) return;
      if (mode.starts) throw new Error("beforeMatch cannot be used with starts");
      const originalMode = Object.assign({}, mode);
      Object.keys(mode).forEach((key) => {
        delete mode[key];
      });
      mode.keywords = originalMode.keywords;
      mode.begin = concat(originalMode.beforeMatch, lookahead(originalMode.begin));
      mode.starts = {
        relevance: 0,
        contains: [
          Object.assign(originalMode, { endsParent: true })
        ]
      };
      mode.relevance = 0;
      delete originalMode.beforeMatch;
    };
    var COMMON_KEYWORDS = [
      "of",
      "and",
      "for",
      "in",
      "not",
      "or",
      "if",
      "then",
      "parent",
      // common variable name
      "list",
      // common variable name
      "value"
      // common variable name
    ];
    var DEFAULT_KEYWORD_SCOPE = "keyword";
    function compileKeywords(rawKeywords, caseInsensitive, scopeName = DEFAULT_KEYWORD_SCOPE) {
      const compiledKeywords = /* @__PURE__ */ Object.create(null);
      if (typeof rawKeywords === "string") {
        compileList(scopeName, rawKeywords.split(" "));
      } else if (Array.isArray(rawKeywords)) {
        compileList(scopeName, rawKeywords);
      } else {
        Object.keys(rawKeywords).forEach(function(scopeName2) {
          Object.assign(
            compiledKeywords,
            compileKeywords(rawKeywords[scopeName2], caseInsensitive, scopeName2)
          );
        });
      }
      return compiledKeywords;
      function compileList(scopeName2, keywordList) {
        if (caseInsensitive) {
          keywordList = keywordList.map((x) => x.toLowerCase());
        }
        keywordList.forEach(function(keyword) {
          const pair = keyword.split("|");
          compiledKeywords[pair[0]] = [scopeName2, scoreForKeyword(pair[0], pair[1])];
        });
      }
    }
    function scoreForKeyword(keyword, providedScore) {
      if (providedScore) {
        return Number(providedScore);
      }
      return commonKeyword(keyword) ? 0 : 1;
    }
    function commonKeyword(keyword) {
      return COMMON_KEYWORDS.includes(keyword.toLowerCase());
    }
    var seenDeprecations = {};
    var error = (message) => {
      console.error(message);
    };
    var warn = (message, ...args) => {
      console.log(`WARN: ${message}`, ...args);
    };
    var deprecated = (version2, message) => {
      if (seenDeprecations[`${version2}/${message}`]) return;
      console.log(`Deprecated as of ${version2}. ${message}`);
      seenDeprecations[`${version2}/${message}`] = true;
    };
    var MultiClassError = new Error();
    function remapScopeNames(mode, regexes, { key }) {
      let offset = 0;
      const scopeNames = mode[key];
      const emit = {};
      const positions = {};
      for (let i = 1; i <= regexes.length; i++) {
        positions[i + offset] = scopeNames[i];
        emit[i + offset] = true;
        offset += countMatchGroups(regexes[i - 1]);
      }
      mode[key] = positions;
      mode[key]._emit = emit;
      mode[key]._multi = true;
    }
    function beginMultiClass(mode) {
      if (!Array.isArray(mode.begin)) return;
      if (mode.skip || mode.excludeBegin || mode.returnBegin) {
        error("skip, excludeBegin, returnBegin not compatible with beginScope: {}");
        throw MultiClassError;
      }
      if (typeof mode.beginScope !== "object" || mode.beginScope === null) {
        error("beginScope must be object");
        throw MultiClassError;
      }
      remapScopeNames(mode, mode.begin, { key: "beginScope" });
      mode.begin = _rewriteBackreferences(mode.begin, { joinWith: "" });
    }
    function endMultiClass(mode) {
      if (!Array.isArray(mode.end)) return;
      if (mode.skip || mode.excludeEnd || mode.returnEnd) {
        error("skip, excludeEnd, returnEnd not compatible with endScope: {}");
        throw MultiClassError;
      }
      if (typeof mode.endScope !== "object" || mode.endScope === null) {
        error("endScope must be object");
        throw MultiClassError;
      }
      remapScopeNames(mode, mode.end, { key: "endScope" });
      mode.end = _rewriteBackreferences(mode.end, { joinWith: "" });
    }
    function scopeSugar(mode) {
      if (mode.scope && typeof mode.scope === "object" && mode.scope !== null) {
        mode.beginScope = mode.scope;
        delete mode.scope;
      }
    }
    function MultiClass(mode) {
      scopeSugar(mode);
      if (typeof mode.beginScope === "string") {
        mode.beginScope = { _wrap: mode.beginScope };
      }
      if (typeof mode.endScope === "string") {
        mode.endScope = { _wrap: mode.endScope };
      }
      beginMultiClass(mode);
      endMultiClass(mode);
    }
    function compileLanguage(language) {
      function langRe(value, global) {
        return new RegExp(
          source(value),
          "m" + (language.case_insensitive ? "i" : "") + (language.unicodeRegex ? "u" : "") + (global ? "g" : "")
        );
      }
      class MultiRegex {
        constructor() {
          this.matchIndexes = {};
          this.regexes = [];
          this.matchAt = 1;
          this.position = 0;
        }
        // @ts-ignore
        addRule(re, opts) {
          opts.position = this.position++;
          this.matchIndexes[this.matchAt] = opts;
          this.regexes.push([opts, re]);
          this.matchAt += countMatchGroups(re) + 1;
        }
        compile() {
          if (this.regexes.length === 0) {
            this.exec = () => null;
          }
          const terminators = this.regexes.map((el) => el[1]);
          this.matcherRe = langRe(_rewriteBackreferences(terminators, { joinWith: "|" }), true);
          this.lastIndex = 0;
        }
        /** @param {string} s */
        exec(s) {
          this.matcherRe.lastIndex = this.lastIndex;
          const match = this.matcherRe.exec(s);
          if (!match) {
            return null;
          }
          const i = match.findIndex((el, i2) => i2 > 0 && el !== void 0);
          const matchData = this.matchIndexes[i];
          match.splice(0, i);
          return Object.assign(match, matchData);
        }
      }
      class ResumableMultiRegex {
        constructor() {
          this.rules = [];
          this.multiRegexes = [];
          this.count = 0;
          this.lastIndex = 0;
          this.regexIndex = 0;
        }
        // @ts-ignore
        getMatcher(index) {
          if (this.multiRegexes[index]) return this.multiRegexes[index];
          const matcher = new MultiRegex();
          this.rules.slice(index).forEach(([re, opts]) => matcher.addRule(re, opts));
          matcher.compile();
          this.multiRegexes[index] = matcher;
          return matcher;
        }
        resumingScanAtSamePosition() {
          return this.regexIndex !== 0;
        }
        considerAll() {
          this.regexIndex = 0;
        }
        // @ts-ignore
        addRule(re, opts) {
          this.rules.push([re, opts]);
          if (opts.type === "begin") this.count++;
        }
        /** @param {string} s */
        exec(s) {
          const m = this.getMatcher(this.regexIndex);
          m.lastIndex = this.lastIndex;
          let result = m.exec(s);
          if (this.resumingScanAtSamePosition()) {
            if (result && result.index === this.lastIndex) ;
            else {
              const m2 = this.getMatcher(0);
              m2.lastIndex = this.lastIndex + 1;
              result = m2.exec(s);
            }
          }
          if (result) {
            this.regexIndex += result.position + 1;
            if (this.regexIndex === this.count) {
              this.considerAll();
            }
          }
          return result;
        }
      }
      function buildModeRegex(mode) {
        const mm = new ResumableMultiRegex();
        mode.contains.forEach((term) => mm.addRule(term.begin, { rule: term, type: "begin" }));
        if (mode.terminatorEnd) {
          mm.addRule(mode.terminatorEnd, { type: "end" });
        }
        if (mode.illegal) {
          mm.addRule(mode.illegal, { type: "illegal" });
        }
        return mm;
      }
      function compileMode(mode, parent) {
        const cmode = (
          /** @type CompiledMode */
          mode
        );
        if (mode.isCompiled) return cmode;
        [
          scopeClassName,
          // do this early so compiler extensions generally don't have to worry about
          // the distinction between match/begin
          compileMatch,
          MultiClass,
          beforeMatchExt
        ].forEach((ext) => ext(mode, parent));
        language.compilerExtensions.forEach((ext) => ext(mode, parent));
        mode.__beforeBegin = null;
        [
          beginKeywords,
          // do this later so compiler extensions that come earlier have access to the
          // raw array if they wanted to perhaps manipulate it, etc.
          compileIllegal,
          // default to 1 relevance if not specified
          compileRelevance
        ].forEach((ext) => ext(mode, parent));
        mode.isCompiled = true;
        let keywordPattern = null;
        if (typeof mode.keywords === "object" && mode.keywords.$pattern) {
          mode.keywords = Object.assign({}, mode.keywords);
          keywordPattern = mode.keywords.$pattern;
          delete mode.keywords.$pattern;
        }
        keywordPattern = keywordPattern || /\w+/;
        if (mode.keywords) {
          mode.keywords = compileKeywords(mode.keywords, language.case_insensitive);
        }
        cmode.keywordPatternRe = langRe(keywordPattern, true);
        if (parent) {
          if (!mode.begin) mode.begin = /\B|\b/;
          cmode.beginRe = langRe(cmode.begin);
          if (!mode.end && !mode.endsWithParent) mode.end = /\B|\b/;
          if (mode.end) cmode.endRe = langRe(cmode.end);
          cmode.terminatorEnd = source(cmode.end) || "";
          if (mode.endsWithParent && parent.terminatorEnd) {
            cmode.terminatorEnd += (mode.end ? "|" : "") + parent.terminatorEnd;
          }
        }
        if (mode.illegal) cmode.illegalRe = langRe(
          /** @type {RegExp | string} */
          mode.illegal
        );
        if (!mode.contains) mode.contains = [];
        mode.contains = [].concat(...mode.contains.map(function(c) {
          return expandOrCloneMode(c === "self" ? mode : c);
        }));
        mode.contains.forEach(function(c) {
          compileMode(
            /** @type Mode */
            c,
            cmode
          );
        });
        if (mode.starts) {
          compileMode(mode.starts, parent);
        }
        cmode.matcher = buildModeRegex(cmode);
        return cmode;
      }
      if (!language.compilerExtensions) language.compilerExtensions = [];
      if (language.contains && language.contains.includes("self")) {
        throw new Error("ERR: contains `self` is not supported at the top-level of a language.  See documentation.");
      }
      language.classNameAliases = inherit$1(language.classNameAliases || {});
      return compileMode(
        /** @type Mode */
        language
      );
    }
    function dependencyOnParent(mode) {
      if (!mode) return false;
      return mode.endsWithParent || dependencyOnParent(mode.starts);
    }
    function expandOrCloneMode(mode) {
      if (mode.variants && !mode.cachedVariants) {
        mode.cachedVariants = mode.variants.map(function(variant) {
          return inherit$1(mode, { variants: null }, variant);
        });
      }
      if (mode.cachedVariants) {
        return mode.cachedVariants;
      }
      if (dependencyOnParent(mode)) {
        return inherit$1(mode, { starts: mode.starts ? inherit$1(mode.starts) : null });
      }
      if (Object.isFrozen(mode)) {
        return inherit$1(mode);
      }
      return mode;
    }
    var version = "11.12.0";
    var HTMLInjectionError = class extends Error {
      constructor(reason, html) {
        super(reason);
        this.name = "HTMLInjectionError";
        this.html = html;
      }
    };
    var escape = escapeHTML;
    var inherit = inherit$1;
    var NO_MATCH = /* @__PURE__ */ Symbol("nomatch");
    var MAX_KEYWORD_HITS = 7;
    var HLJS = function(hljs) {
      const languages = /* @__PURE__ */ Object.create(null);
      const aliases = /* @__PURE__ */ Object.create(null);
      const plugins = [];
      let SAFE_MODE = true;
      const LANGUAGE_NOT_FOUND = "Could not find the language '{}', did you forget to load/include a language module?";
      const PLAINTEXT_LANGUAGE = { disableAutodetect: true, name: "Plain text", contains: [] };
      let options = {
        ignoreUnescapedHTML: false,
        throwUnescapedHTML: false,
        noHighlightRe: /^(no-?highlight)$/i,
        languageDetectRe: /\blang(?:uage)?-([\w-]+)\b/i,
        classPrefix: "hljs-",
        cssSelector: "pre code",
        languages: null,
        // beta configuration options, subject to change, welcome to discuss
        // https://github.com/highlightjs/highlight.js/issues/1086
        __emitter: TokenTreeEmitter
      };
      function shouldNotHighlight(languageName) {
        return options.noHighlightRe.test(languageName);
      }
      function blockLanguage(block) {
        let classes = block.className + " ";
        classes += block.parentNode ? block.parentNode.className : "";
        const match = options.languageDetectRe.exec(classes);
        if (match) {
          const language = getLanguage(match[1]);
          if (!language) {
            warn(LANGUAGE_NOT_FOUND.replace("{}", match[1]));
            warn("Falling back to no-highlight mode for this block.", block);
          }
          return language ? match[1] : "no-highlight";
        }
        return classes.split(/\s+/).find((_class) => shouldNotHighlight(_class) || getLanguage(_class));
      }
      function highlight2(codeOrLanguageName, optionsOrCode, ignoreIllegals) {
        let code = "";
        let languageName = "";
        if (typeof optionsOrCode === "object") {
          code = codeOrLanguageName;
          ignoreIllegals = optionsOrCode.ignoreIllegals;
          languageName = optionsOrCode.language;
        } else {
          deprecated("10.7.0", "highlight(lang, code, ...args) has been deprecated.");
          deprecated("10.7.0", "Please use highlight(code, options) instead.\nhttps://github.com/highlightjs/highlight.js/issues/2277");
          languageName = codeOrLanguageName;
          code = optionsOrCode;
        }
        if (ignoreIllegals === void 0) {
          ignoreIllegals = true;
        }
        const context = {
          code,
          language: languageName
        };
        fire("before:highlight", context);
        const result = context.result ? context.result : _highlight(context.language, context.code, ignoreIllegals);
        result.code = context.code;
        fire("after:highlight", result);
        return result;
      }
      function _highlight(languageName, codeToHighlight, ignoreIllegals, continuation) {
        const keywordHits = /* @__PURE__ */ Object.create(null);
        function keywordData(mode, matchText) {
          return mode.keywords[matchText];
        }
        function processKeywords() {
          if (!top.keywords) {
            emitter.addText(modeBuffer);
            return;
          }
          let lastIndex = 0;
          top.keywordPatternRe.lastIndex = 0;
          let match = top.keywordPatternRe.exec(modeBuffer);
          let buf = "";
          while (match) {
            buf += modeBuffer.substring(lastIndex, match.index);
            const word = language.case_insensitive ? match[0].toLowerCase() : match[0];
            const data = keywordData(top, word);
            if (data) {
              const [kind, keywordRelevance] = data;
              emitter.addText(buf);
              buf = "";
              keywordHits[word] = (keywordHits[word] || 0) + 1;
              if (keywordHits[word] <= MAX_KEYWORD_HITS) relevance += keywordRelevance;
              if (kind.startsWith("_")) {
                buf += match[0];
              } else {
                const cssClass = language.classNameAliases[kind] || kind;
                emitKeyword(match[0], cssClass);
              }
            } else {
              buf += match[0];
            }
            lastIndex = top.keywordPatternRe.lastIndex;
            match = top.keywordPatternRe.exec(modeBuffer);
          }
          buf += modeBuffer.substring(lastIndex);
          emitter.addText(buf);
        }
        function processSubLanguage() {
          if (modeBuffer === "") return;
          let result2 = null;
          if (typeof top.subLanguage === "string") {
            if (!languages[top.subLanguage]) {
              emitter.addText(modeBuffer);
              return;
            }
            result2 = _highlight(top.subLanguage, modeBuffer, true, continuations[top.subLanguage]);
            continuations[top.subLanguage] = /** @type {CompiledMode} */
            result2._top;
          } else {
            result2 = highlightAuto(modeBuffer, top.subLanguage.length ? top.subLanguage : null);
          }
          if (top.relevance > 0) {
            relevance += result2.relevance;
          }
          emitter.__addSublanguage(result2._emitter, result2.language);
        }
        function processBuffer() {
          if (top.subLanguage != null) {
            processSubLanguage();
          } else {
            processKeywords();
          }
          modeBuffer = "";
        }
        function emitKeyword(keyword, scope) {
          if (keyword === "") return;
          emitter.startScope(scope);
          emitter.addText(keyword);
          emitter.endScope();
        }
        function emitMultiClass(scope, match) {
          let i = 1;
          const max = match.length - 1;
          while (i <= max) {
            if (!scope._emit[i]) {
              i++;
              continue;
            }
            const klass = language.classNameAliases[scope[i]] || scope[i];
            const text = match[i];
            if (klass) {
              emitKeyword(text, klass);
            } else {
              modeBuffer = text;
              processKeywords();
              modeBuffer = "";
            }
            i++;
          }
        }
        function startNewMode(mode, match) {
          if (mode.scope && typeof mode.scope === "string") {
            emitter.openNode(language.classNameAliases[mode.scope] || mode.scope);
          }
          if (mode.beginScope) {
            if (mode.beginScope._wrap) {
              emitKeyword(modeBuffer, language.classNameAliases[mode.beginScope._wrap] || mode.beginScope._wrap);
              modeBuffer = "";
            } else if (mode.beginScope._multi) {
              emitMultiClass(mode.beginScope, match);
              modeBuffer = "";
            }
          }
          top = Object.create(mode, { parent: { value: top } });
          return top;
        }
        function endOfMode(mode, match, matchPlusRemainder) {
          let matched = startsWith(mode.endRe, matchPlusRemainder);
          if (matched) {
            if (mode["on:end"]) {
              const resp = new Response(mode);
              mode["on:end"](match, resp);
              if (resp.isMatchIgnored) matched = false;
            }
            if (matched) {
              while (mode.endsParent && mode.parent) {
                mode = mode.parent;
              }
              return mode;
            }
          }
          if (mode.endsWithParent) {
            return endOfMode(mode.parent, match, matchPlusRemainder);
          }
        }
        function doIgnore(lexeme) {
          if (top.matcher.regexIndex === 0) {
            modeBuffer += lexeme[0];
            return 1;
          } else {
            resumeScanAtSamePosition = true;
            return 0;
          }
        }
        function doBeginMatch(match) {
          const lexeme = match[0];
          const newMode = match.rule;
          const resp = new Response(newMode);
          const beforeCallbacks = [newMode.__beforeBegin, newMode["on:begin"]];
          for (const cb of beforeCallbacks) {
            if (!cb) continue;
            cb(match, resp);
            if (resp.isMatchIgnored) return doIgnore(lexeme);
          }
          if (newMode.skip) {
            modeBuffer += lexeme;
          } else {
            if (newMode.excludeBegin) {
              modeBuffer += lexeme;
            }
            processBuffer();
            if (!newMode.returnBegin && !newMode.excludeBegin) {
              modeBuffer = lexeme;
            }
          }
          startNewMode(newMode, match);
          return newMode.returnBegin ? 0 : lexeme.length;
        }
        function doEndMatch(match) {
          const lexeme = match[0];
          const matchPlusRemainder = codeToHighlight.substring(match.index);
          const endMode = endOfMode(top, match, matchPlusRemainder);
          if (!endMode) {
            return NO_MATCH;
          }
          const origin = top;
          if (top.endScope && top.endScope._wrap) {
            processBuffer();
            emitKeyword(lexeme, top.endScope._wrap);
          } else if (top.endScope && top.endScope._multi) {
            processBuffer();
            emitMultiClass(top.endScope, match);
          } else if (origin.skip) {
            modeBuffer += lexeme;
          } else {
            if (!(origin.returnEnd || origin.excludeEnd)) {
              modeBuffer += lexeme;
            }
            processBuffer();
            if (origin.excludeEnd) {
              modeBuffer = lexeme;
            }
          }
          do {
            if (top.scope) {
              emitter.closeNode();
            }
            if (!top.skip && !top.subLanguage) {
              relevance += top.relevance;
            }
            top = top.parent;
          } while (top !== endMode.parent);
          if (endMode.starts) {
            startNewMode(endMode.starts, match);
          }
          return origin.returnEnd ? 0 : lexeme.length;
        }
        function processContinuations() {
          const list = [];
          for (let current = top; current !== language; current = current.parent) {
            if (current.scope) {
              list.unshift(current.scope);
            }
          }
          list.forEach((item) => emitter.openNode(item));
        }
        let lastMatch = {};
        function processLexeme(textBeforeMatch, match) {
          const lexeme = match && match[0];
          modeBuffer += textBeforeMatch;
          if (lexeme == null) {
            processBuffer();
            return 0;
          }
          if (lastMatch.type === "begin" && match.type === "end" && lastMatch.index === match.index && lexeme === "") {
            modeBuffer += codeToHighlight.slice(match.index, match.index + 1);
            if (!SAFE_MODE) {
              const err = new Error(`0 width match regex (${languageName})`);
              err.languageName = languageName;
              err.badRule = lastMatch.rule;
              throw err;
            }
            return 1;
          }
          lastMatch = match;
          if (match.type === "begin") {
            return doBeginMatch(match);
          } else if (match.type === "illegal" && !ignoreIllegals) {
            const err = new Error('Illegal lexeme "' + lexeme + '" for mode "' + (top.scope || "<unnamed>") + '"');
            err.mode = top;
            throw err;
          } else if (match.type === "end") {
            const processed = doEndMatch(match);
            if (processed !== NO_MATCH) {
              return processed;
            }
          }
          if (match.type === "illegal" && lexeme === "") {
            if (match.index === codeToHighlight.length) ;
            else {
              modeBuffer += "\n";
            }
            return 1;
          }
          if (iterations > 1e5 && iterations > match.index * 3) {
            const err = new Error("potential infinite loop, way more iterations than matches");
            throw err;
          }
          modeBuffer += lexeme;
          return lexeme.length;
        }
        const language = getLanguage(languageName);
        if (!language) {
          error(LANGUAGE_NOT_FOUND.replace("{}", languageName));
          throw new Error('Unknown language: "' + languageName + '"');
        }
        const md = compileLanguage(language);
        let result = "";
        let top = continuation || md;
        const continuations = {};
        const emitter = new options.__emitter(options);
        processContinuations();
        let modeBuffer = "";
        let relevance = 0;
        let index = 0;
        let iterations = 0;
        let resumeScanAtSamePosition = false;
        try {
          if (!language.__emitTokens) {
            top.matcher.considerAll();
            for (; ; ) {
              iterations++;
              if (resumeScanAtSamePosition) {
                resumeScanAtSamePosition = false;
              } else {
                top.matcher.considerAll();
              }
              top.matcher.lastIndex = index;
              const match = top.matcher.exec(codeToHighlight);
              if (!match) break;
              const beforeMatch = codeToHighlight.substring(index, match.index);
              const processedCount = processLexeme(beforeMatch, match);
              index = match.index + processedCount;
            }
            processLexeme(codeToHighlight.substring(index));
          } else {
            language.__emitTokens(codeToHighlight, emitter);
          }
          emitter.finalize();
          result = emitter.toHTML();
          return {
            language: languageName,
            value: result,
            relevance,
            illegal: false,
            _emitter: emitter,
            _top: top
          };
        } catch (err) {
          if (err.message && err.message.includes("Illegal")) {
            return {
              language: languageName,
              value: escape(codeToHighlight),
              illegal: true,
              relevance: 0,
              _illegalBy: {
                message: err.message,
                index,
                context: codeToHighlight.slice(index - 100, index + 100),
                mode: err.mode,
                resultSoFar: result
              },
              _emitter: emitter
            };
          } else if (SAFE_MODE) {
            return {
              language: languageName,
              value: escape(codeToHighlight),
              illegal: false,
              relevance: 0,
              errorRaised: err,
              _emitter: emitter,
              _top: top
            };
          } else {
            throw err;
          }
        }
      }
      function justTextHighlightResult(code) {
        const result = {
          value: escape(code),
          illegal: false,
          relevance: 0,
          _top: PLAINTEXT_LANGUAGE,
          _emitter: new options.__emitter(options)
        };
        result._emitter.addText(code);
        return result;
      }
      function highlightAuto(code, languageSubset) {
        languageSubset = languageSubset || options.languages || Object.keys(languages);
        const plaintext = justTextHighlightResult(code);
        const results = languageSubset.filter(getLanguage).filter(autoDetection).map(
          (name) => _highlight(name, code, false)
        );
        results.unshift(plaintext);
        const sorted = results.sort((a, b) => {
          if (a.relevance !== b.relevance) return b.relevance - a.relevance;
          if (a.language && b.language) {
            if (getLanguage(a.language).supersetOf === b.language) {
              return 1;
            } else if (getLanguage(b.language).supersetOf === a.language) {
              return -1;
            }
          }
          return 0;
        });
        const [best, secondBest] = sorted;
        const result = best;
        result.secondBest = secondBest;
        return result;
      }
      function updateClassName(element, currentLang, resultLang) {
        const language = currentLang && aliases[currentLang] || resultLang;
        element.classList.add("hljs");
        element.classList.add(`language-${language}`);
      }
      function highlightElement(element) {
        let node = null;
        const language = blockLanguage(element);
        if (shouldNotHighlight(language)) return;
        fire(
          "before:highlightElement",
          { el: element, language }
        );
        if (element.dataset.highlighted) {
          console.log("Element previously highlighted. To highlight again, first unset `dataset.highlighted`.", element);
          return;
        }
        if (element.children.length > 0) {
          if (!options.ignoreUnescapedHTML) {
            console.warn("One of your code blocks includes unescaped HTML. This is a potentially serious security risk.");
            console.warn("https://github.com/highlightjs/highlight.js/wiki/security");
            console.warn("The element with unescaped HTML:");
            console.warn(element);
          }
          if (options.throwUnescapedHTML) {
            const err = new HTMLInjectionError(
              "One of your code blocks includes unescaped HTML.",
              element.innerHTML
            );
            throw err;
          }
        }
        node = element;
        const text = node.textContent;
        const result = language ? highlight2(text, { language, ignoreIllegals: true }) : highlightAuto(text);
        element.innerHTML = result.value;
        element.dataset.highlighted = "yes";
        updateClassName(element, language, result.language);
        element.result = {
          language: result.language,
          // TODO: remove with version 11.0
          re: result.relevance,
          relevance: result.relevance
        };
        if (result.secondBest) {
          element.secondBest = {
            language: result.secondBest.language,
            relevance: result.secondBest.relevance
          };
        }
        fire("after:highlightElement", { el: element, result, text });
      }
      function configure(userOptions) {
        options = inherit(options, userOptions);
      }
      const initHighlighting = () => {
        highlightAll();
        deprecated("10.6.0", "initHighlighting() deprecated.  Use highlightAll() now.");
      };
      function initHighlightingOnLoad() {
        highlightAll();
        deprecated("10.6.0", "initHighlightingOnLoad() deprecated.  Use highlightAll() now.");
      }
      let wantsHighlight = false;
      function highlightAll() {
        function boot() {
          highlightAll();
        }
        if (document.readyState === "loading") {
          if (!wantsHighlight) {
            window.addEventListener("DOMContentLoaded", boot, false);
          }
          wantsHighlight = true;
          return;
        }
        const blocks = document.querySelectorAll(options.cssSelector);
        blocks.forEach(highlightElement);
      }
      function registerLanguage(languageName, languageDefinition) {
        let lang = null;
        try {
          lang = languageDefinition(hljs);
        } catch (error$1) {
          error("Language definition for '{}' could not be registered.".replace("{}", languageName));
          if (!SAFE_MODE) {
            throw error$1;
          } else {
            error(error$1);
          }
          lang = PLAINTEXT_LANGUAGE;
        }
        if (!lang.name) lang.name = languageName;
        languages[languageName] = lang;
        lang.rawDefinition = languageDefinition.bind(null, hljs);
        if (lang.aliases) {
          registerAliases(lang.aliases, { languageName });
        }
      }
      function unregisterLanguage(languageName) {
        delete languages[languageName];
        for (const alias of Object.keys(aliases)) {
          if (aliases[alias] === languageName) {
            delete aliases[alias];
          }
        }
      }
      function listLanguages() {
        return Object.keys(languages);
      }
      function getLanguage(name) {
        name = (name || "").toLowerCase();
        return languages[name] || languages[aliases[name]];
      }
      function registerAliases(aliasList, { languageName }) {
        if (typeof aliasList === "string") {
          aliasList = [aliasList];
        }
        aliasList.forEach((alias) => {
          aliases[alias.toLowerCase()] = languageName;
        });
      }
      function autoDetection(name) {
        const lang = getLanguage(name);
        return lang && !lang.disableAutodetect;
      }
      function upgradePluginAPI(plugin) {
        if (plugin["before:highlightBlock"] && !plugin["before:highlightElement"]) {
          plugin["before:highlightElement"] = (data) => {
            plugin["before:highlightBlock"](
              Object.assign({ block: data.el }, data)
            );
          };
        }
        if (plugin["after:highlightBlock"] && !plugin["after:highlightElement"]) {
          plugin["after:highlightElement"] = (data) => {
            plugin["after:highlightBlock"](
              Object.assign({ block: data.el }, data)
            );
          };
        }
      }
      function addPlugin(plugin) {
        upgradePluginAPI(plugin);
        plugins.push(plugin);
      }
      function removePlugin(plugin) {
        const index = plugins.indexOf(plugin);
        if (index !== -1) {
          plugins.splice(index, 1);
        }
      }
      function fire(event, args) {
        const cb = event;
        plugins.forEach(function(plugin) {
          if (plugin[cb]) {
            plugin[cb](args);
          }
        });
      }
      function deprecateHighlightBlock(el) {
        deprecated("10.7.0", "highlightBlock will be removed entirely in v12.0");
        deprecated("10.7.0", "Please use highlightElement now.");
        return highlightElement(el);
      }
      Object.assign(hljs, {
        highlight: highlight2,
        highlightAuto,
        highlightAll,
        highlightElement,
        // TODO: Remove with v12 API
        highlightBlock: deprecateHighlightBlock,
        configure,
        initHighlighting,
        initHighlightingOnLoad,
        registerLanguage,
        unregisterLanguage,
        listLanguages,
        getLanguage,
        registerAliases,
        autoDetection,
        inherit,
        addPlugin,
        removePlugin
      });
      hljs.debugMode = function() {
        SAFE_MODE = false;
      };
      hljs.safeMode = function() {
        SAFE_MODE = true;
      };
      hljs.versionString = version;
      hljs.regex = {
        concat,
        lookahead,
        either,
        optional,
        anyNumberOfTimes
      };
      for (const key in MODES) {
        if (typeof MODES[key] === "object") {
          deepFreeze(MODES[key]);
        }
      }
      Object.assign(hljs, MODES);
      return hljs;
    };
    var highlight = HLJS({});
    highlight.newInstance = () => HLJS({});
    module.exports = highlight;
    highlight.HighlightJS = highlight;
    highlight.default = highlight;
  }
});

// src/panel/dom.ts
var MAX_PRE = 2e4;
function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === void 0 || value === null || value === false) continue;
    if (key === "class") node.className = String(value);
    else if (key === "text") node.textContent = String(value);
    else if (key.startsWith("on")) {
      if (typeof value === "function")
        node.addEventListener(key.slice(2), value);
    } else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === void 0 || child === null || child === false) continue;
    node.append(
      typeof child === "string" ? document.createTextNode(child) : child
    );
  }
  return node;
}
function clip(text, limit = MAX_PRE) {
  const s = String(text ?? "");
  return s.length > limit ? `${s.slice(0, limit)}
… (${s.length - limit} more characters)` : s;
}
function pretty(value) {
  try {
    return JSON.stringify(value, null, 2);
  } catch {
    return String(value);
  }
}

// src/panel/cell-links.ts
var REVEAL_CELL_EVENT = "jupyter-agent:reveal-cell";
function cellName(cellId, position) {
  return position ? `cell ${position}` : `cell ${cellId.slice(0, 8)}`;
}
function cellLink(cellId, text) {
  const link2 = h("a", {
    href: "#",
    class: "ja-reveal-cell",
    title: `Show cell ${cellId} in the notebook`,
    "data-cell-id": cellId,
    text
  });
  link2.addEventListener("click", (event) => {
    event.preventDefault();
    link2.dispatchEvent(
      new CustomEvent(REVEAL_CELL_EVENT, {
        detail: { cellId },
        bubbles: true,
        cancelable: true
      })
    );
  });
  return link2;
}
function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
function withCellLinks(text, cells) {
  const ids = [...cells.keys()].filter(Boolean);
  if (!ids.length || !text) return [document.createTextNode(text)];
  ids.sort((a, b) => b.length - a.length);
  const pattern = new RegExp(
    `(\\b[Cc]ell )?(?<![\\w-])(${ids.map(escapeRegExp).join("|")})(?![\\w-])`,
    "g"
  );
  const nodes = [];
  let at = 0;
  for (const match of text.matchAll(pattern)) {
    const start = match.index ?? 0;
    if (start > at) nodes.push(document.createTextNode(text.slice(at, start)));
    const id = match[2];
    let name = cellName(id, cells.get(id));
    if (match[1]?.startsWith("C")) name = `C${name.slice(1)}`;
    nodes.push(cellLink(id, name));
    at = start + match[0].length;
  }
  if (at < text.length) nodes.push(document.createTextNode(text.slice(at)));
  return nodes;
}
function inputCells(input) {
  const cells = /* @__PURE__ */ new Map();
  if (input && typeof input === "object")
    for (const key of ["cell_id", "after", "before"]) {
      const value = input[key];
      if (typeof value === "string" && value) cells.set(value, void 0);
    }
  return cells;
}

// ../../main/js/node_modules/highlight.js/es/core.js
var import_core = __toESM(require_core(), 1);
var core_default = import_core.default;

// ../../main/js/node_modules/highlight.js/es/languages/bash.js
function bash(hljs) {
  const regex = hljs.regex;
  const VAR = {};
  const BRACED_VAR = {
    begin: /\$\{/,
    end: /\}/,
    contains: [
      "self",
      {
        begin: /:-/,
        contains: [VAR]
      }
      // default values
    ]
  };
  Object.assign(VAR, {
    className: "variable",
    variants: [
      { begin: regex.concat(
        /\$[\w\d#@][\w\d_]*/,
        // negative look-ahead tries to avoid matching patterns that are not
        // Perl at all like $ident$, @ident@, etc.
        `(?![\\w\\d])(?![$])`
      ) },
      BRACED_VAR
    ]
  });
  const SUBST = {
    className: "subst",
    begin: /\$\(/,
    end: /\)/,
    contains: [hljs.BACKSLASH_ESCAPE]
  };
  const COMMENT = hljs.inherit(
    hljs.COMMENT(),
    {
      match: [
        /(^|\s)/,
        /#.*$/
      ],
      scope: {
        2: "comment"
      }
    }
  );
  const HERE_DOC = {
    begin: /<<-?\s*(?=\w+)/,
    starts: { contains: [
      hljs.END_SAME_AS_BEGIN({
        begin: /(\w+)/,
        end: /(\w+)/,
        className: "string"
      })
    ] }
  };
  const QUOTE_STRING = {
    className: "string",
    begin: /"/,
    end: /"/,
    contains: [
      hljs.BACKSLASH_ESCAPE,
      VAR,
      SUBST
    ]
  };
  SUBST.contains.push(QUOTE_STRING);
  const ESCAPED_QUOTE = {
    match: /\\"/
  };
  const APOS_STRING = {
    className: "string",
    begin: /'/,
    end: /'/
  };
  const ESCAPED_APOS = {
    match: /\\'/
  };
  const ARITHMETIC = {
    begin: /\$?\(\(/,
    end: /\)\)/,
    contains: [
      {
        begin: /\d+#[0-9a-f]+/,
        className: "number"
      },
      hljs.NUMBER_MODE,
      VAR
    ]
  };
  const SH_LIKE_SHELLS = [
    "fish",
    "bash",
    "zsh",
    "sh",
    "csh",
    "ksh",
    "tcsh",
    "dash",
    "scsh"
  ];
  const KNOWN_SHEBANG = hljs.SHEBANG({
    binary: `(${SH_LIKE_SHELLS.join("|")})`,
    relevance: 10
  });
  const FUNCTION = {
    className: "function",
    begin: /\w[\w\d_]*\s*\(\s*\)\s*\{/,
    returnBegin: true,
    contains: [hljs.inherit(hljs.TITLE_MODE, { begin: /\w[\w\d_]*/ })],
    relevance: 0
  };
  const KEYWORDS = [
    "if",
    "then",
    "else",
    "elif",
    "fi",
    "time",
    "for",
    "while",
    "until",
    "in",
    "do",
    "done",
    "case",
    "esac",
    "coproc",
    "function",
    "select"
  ];
  const LITERALS = [
    "true",
    "false"
  ];
  const PATH_MODE = { match: /(\/[a-z._-]+)+/ };
  const SHELL_BUILT_INS = [
    "break",
    "cd",
    "continue",
    "eval",
    "exec",
    "exit",
    "export",
    "getopts",
    "hash",
    "pwd",
    "readonly",
    "return",
    "shift",
    "test",
    "times",
    "trap",
    "umask",
    "unset"
  ];
  const BASH_BUILT_INS = [
    "alias",
    "bind",
    "builtin",
    "caller",
    "command",
    "declare",
    "echo",
    "enable",
    "help",
    "let",
    "local",
    "logout",
    "mapfile",
    "printf",
    "read",
    "readarray",
    "source",
    "sudo",
    "type",
    "typeset",
    "ulimit",
    "unalias"
  ];
  const ZSH_BUILT_INS = [
    "autoload",
    "bg",
    "bindkey",
    "bye",
    "cap",
    "chdir",
    "clone",
    "comparguments",
    "compcall",
    "compctl",
    "compdescribe",
    "compfiles",
    "compgroups",
    "compquote",
    "comptags",
    "comptry",
    "compvalues",
    "dirs",
    "disable",
    "disown",
    "echotc",
    "echoti",
    "emulate",
    "fc",
    "fg",
    "float",
    "functions",
    "getcap",
    "getln",
    "history",
    "integer",
    "jobs",
    "kill",
    "limit",
    "log",
    "noglob",
    "popd",
    "print",
    "pushd",
    "pushln",
    "rehash",
    "sched",
    "setcap",
    "setopt",
    "stat",
    "suspend",
    "ttyctl",
    "unfunction",
    "unhash",
    "unlimit",
    "unsetopt",
    "vared",
    "wait",
    "whence",
    "where",
    "which",
    "zcompile",
    "zformat",
    "zftp",
    "zle",
    "zmodload",
    "zparseopts",
    "zprof",
    "zpty",
    "zregexparse",
    "zsocket",
    "zstyle",
    "ztcp"
  ];
  const GNU_CORE_UTILS = [
    "chcon",
    "chgrp",
    "chown",
    "chmod",
    "cp",
    "dd",
    "df",
    "dir",
    "dircolors",
    "ln",
    "ls",
    "mkdir",
    "mkfifo",
    "mknod",
    "mktemp",
    "mv",
    "realpath",
    "rm",
    "rmdir",
    "shred",
    "sync",
    "touch",
    "truncate",
    "vdir",
    "b2sum",
    "base32",
    "base64",
    "cat",
    "cksum",
    "comm",
    "csplit",
    "cut",
    "expand",
    "fmt",
    "fold",
    "head",
    "join",
    "md5sum",
    "nl",
    "numfmt",
    "od",
    "paste",
    "ptx",
    "pr",
    "sha1sum",
    "sha224sum",
    "sha256sum",
    "sha384sum",
    "sha512sum",
    "shuf",
    "sort",
    "split",
    "sum",
    "tac",
    "tail",
    "tr",
    "tsort",
    "unexpand",
    "uniq",
    "wc",
    "arch",
    "basename",
    "chroot",
    "date",
    "dirname",
    "du",
    "echo",
    "env",
    "expr",
    "factor",
    // "false", // keyword literal already
    "groups",
    "hostid",
    "id",
    "link",
    "logname",
    "nice",
    "nohup",
    "nproc",
    "pathchk",
    "pinky",
    "printenv",
    "printf",
    "pwd",
    "readlink",
    "runcon",
    "seq",
    "sleep",
    "stat",
    "stdbuf",
    "stty",
    "tee",
    "test",
    "timeout",
    // "true", // keyword literal already
    "tty",
    "uname",
    "unlink",
    "uptime",
    "users",
    "who",
    "whoami",
    "yes"
  ];
  return {
    name: "Bash",
    aliases: [
      "sh",
      "zsh"
    ],
    keywords: {
      $pattern: /\b[a-z][a-z0-9._-]+\b/,
      keyword: KEYWORDS,
      literal: LITERALS,
      built_in: [
        ...SHELL_BUILT_INS,
        ...BASH_BUILT_INS,
        // Shell modifiers
        "set",
        "shopt",
        ...ZSH_BUILT_INS,
        ...GNU_CORE_UTILS
      ]
    },
    contains: [
      KNOWN_SHEBANG,
      // to catch known shells and boost relevancy
      hljs.SHEBANG(),
      // to catch unknown shells but still highlight the shebang
      FUNCTION,
      ARITHMETIC,
      COMMENT,
      HERE_DOC,
      PATH_MODE,
      QUOTE_STRING,
      ESCAPED_QUOTE,
      APOS_STRING,
      ESCAPED_APOS,
      VAR
    ]
  };
}

// ../../main/js/node_modules/highlight.js/es/languages/python.js
function python(hljs) {
  const regex = hljs.regex;
  const IDENT_RE = /[\p{XID_Start}_]\p{XID_Continue}*/u;
  const RESERVED_WORDS = [
    "and",
    "as",
    "assert",
    "async",
    "await",
    "break",
    "case",
    "class",
    "continue",
    "def",
    "del",
    "elif",
    "else",
    "except",
    "finally",
    "for",
    "from",
    "global",
    "if",
    "import",
    "in",
    "is",
    "lambda",
    "lazy",
    "match",
    "nonlocal|10",
    "not",
    "or",
    "pass",
    "raise",
    "return",
    "try",
    "while",
    "with",
    "yield"
  ];
  const BUILT_INS = [
    "__import__",
    "abs",
    "aiter",
    "all",
    "anext",
    "any",
    "ascii",
    "bin",
    "bool",
    "breakpoint",
    "bytearray",
    "bytes",
    "callable",
    "chr",
    "classmethod",
    "compile",
    "complex",
    "delattr",
    "dict",
    "dir",
    "divmod",
    "enumerate",
    "eval",
    "exec",
    "filter",
    "float",
    "format",
    "frozendict",
    "frozenset",
    "getattr",
    "globals",
    "hasattr",
    "hash",
    "help",
    "hex",
    "id",
    "input",
    "int",
    "isinstance",
    "issubclass",
    "iter",
    "len",
    "list",
    "locals",
    "map",
    "max",
    "memoryview",
    "min",
    "next",
    "object",
    "oct",
    "open",
    "ord",
    "pow",
    "print",
    "property",
    "range",
    "repr",
    "reversed",
    "round",
    "sentinel",
    "set",
    "setattr",
    "slice",
    "sorted",
    "staticmethod",
    "str",
    "sum",
    "super",
    "tuple",
    "type",
    "vars",
    "zip"
  ];
  const LITERALS = [
    "__debug__",
    "Ellipsis",
    "False",
    "None",
    "NotImplemented",
    "True"
  ];
  const TYPES = [
    "Any",
    "Callable",
    "Coroutine",
    "Dict",
    "List",
    "Literal",
    "Generic",
    "Optional",
    "Sequence",
    "Set",
    "Tuple",
    "Type",
    "Union"
  ];
  const KEYWORDS = {
    $pattern: /[A-Za-z]\w+|__\w+__/,
    keyword: RESERVED_WORDS,
    built_in: BUILT_INS,
    literal: LITERALS,
    type: TYPES
  };
  const PROMPT = {
    className: "meta",
    begin: /^(>>>|\.\.\.) /
  };
  const SUBST = {
    className: "subst",
    begin: /\{/,
    end: /\}/,
    keywords: KEYWORDS,
    illegal: /#/
  };
  const LITERAL_BRACKET = {
    begin: /\{\{/,
    relevance: 0
  };
  const STRING = {
    className: "string",
    contains: [hljs.BACKSLASH_ESCAPE],
    variants: [
      {
        begin: /([uU]|[bB]|[rR]|[bB][rR]|[rR][bB])?'''/,
        end: /'''/,
        contains: [
          hljs.BACKSLASH_ESCAPE,
          PROMPT
        ],
        relevance: 10
      },
      {
        begin: /([uU]|[bB]|[rR]|[bB][rR]|[rR][bB])?"""/,
        end: /"""/,
        contains: [
          hljs.BACKSLASH_ESCAPE,
          PROMPT
        ],
        relevance: 10
      },
      {
        begin: /([fFtT][rR]|[rR][fFtT]|[fFtT])'''/,
        end: /'''/,
        contains: [
          hljs.BACKSLASH_ESCAPE,
          PROMPT,
          LITERAL_BRACKET,
          SUBST
        ]
      },
      {
        begin: /([fFtT][rR]|[rR][fFtT]|[fFtT])"""/,
        end: /"""/,
        contains: [
          hljs.BACKSLASH_ESCAPE,
          PROMPT,
          LITERAL_BRACKET,
          SUBST
        ]
      },
      {
        begin: /([uU]|[rR])'/,
        end: /'/,
        relevance: 10
      },
      {
        begin: /([uU]|[rR])"/,
        end: /"/,
        relevance: 10
      },
      {
        begin: /([bB]|[bB][rR]|[rR][bB])'/,
        end: /'/
      },
      {
        begin: /([bB]|[bB][rR]|[rR][bB])"/,
        end: /"/
      },
      {
        begin: /([fFtT][rR]|[rR][fFtT]|[fFtT])'/,
        end: /'/,
        contains: [
          hljs.BACKSLASH_ESCAPE,
          LITERAL_BRACKET,
          SUBST
        ]
      },
      {
        begin: /([fFtT][rR]|[rR][fFtT]|[fFtT])"/,
        end: /"/,
        contains: [
          hljs.BACKSLASH_ESCAPE,
          LITERAL_BRACKET,
          SUBST
        ]
      },
      hljs.APOS_STRING_MODE,
      hljs.QUOTE_STRING_MODE
    ]
  };
  const digitpart = "[0-9](_?[0-9])*";
  const pointfloat = `(\\b(${digitpart}))?\\.(${digitpart})|\\b(${digitpart})\\.`;
  const lookahead = `\\b|${RESERVED_WORDS.join("|")}`;
  const NUMBER = {
    className: "number",
    relevance: 0,
    variants: [
      // exponentfloat, pointfloat
      // https://docs.python.org/3.9/reference/lexical_analysis.html#floating-point-literals
      // optionally imaginary
      // https://docs.python.org/3.9/reference/lexical_analysis.html#imaginary-literals
      // Note: no leading \b because floats can start with a decimal point
      // and we don't want to mishandle e.g. `fn(.5)`,
      // no trailing \b for pointfloat because it can end with a decimal point
      // and we don't want to mishandle e.g. `0..hex()`; this should be safe
      // because both MUST contain a decimal point and so cannot be confused with
      // the interior part of an identifier
      {
        begin: `(\\b(${digitpart})|(${pointfloat}))[eE][+-]?(${digitpart})[jJ]?(?=${lookahead})`
      },
      {
        begin: `(${pointfloat})[jJ]?`
      },
      // decinteger, bininteger, octinteger, hexinteger
      // https://docs.python.org/3.9/reference/lexical_analysis.html#integer-literals
      // optionally "long" in Python 2
      // https://docs.python.org/2.7/reference/lexical_analysis.html#integer-and-long-integer-literals
      // decinteger is optionally imaginary
      // https://docs.python.org/3.9/reference/lexical_analysis.html#imaginary-literals
      {
        begin: `\\b([1-9](_?[0-9])*|0+(_?0)*)[lLjJ]?(?=${lookahead})`
      },
      {
        begin: `\\b0[bB](_?[01])+[lL]?(?=${lookahead})`
      },
      {
        begin: `\\b0[oO](_?[0-7])+[lL]?(?=${lookahead})`
      },
      {
        begin: `\\b0[xX](_?[0-9a-fA-F])+[lL]?(?=${lookahead})`
      },
      // imagnumber (digitpart-based)
      // https://docs.python.org/3.9/reference/lexical_analysis.html#imaginary-literals
      {
        begin: `\\b(${digitpart})[jJ](?=${lookahead})`
      }
    ]
  };
  const COMMENT_TYPE = {
    className: "comment",
    begin: regex.lookahead(/# type:/),
    end: /$/,
    keywords: KEYWORDS,
    contains: [
      {
        // prevent keywords from coloring `type`
        begin: /# type:/
      },
      // comment within a datatype comment includes no keywords
      {
        begin: /#/,
        end: /\b\B/,
        endsWithParent: true
      }
    ]
  };
  const PARAMS = {
    className: "params",
    variants: [
      // Exclude params in functions without params
      {
        className: "",
        begin: /\(\s*\)/,
        skip: true
      },
      {
        begin: /\(/,
        end: /\)/,
        excludeBegin: true,
        excludeEnd: true,
        keywords: KEYWORDS,
        contains: [
          "self",
          PROMPT,
          NUMBER,
          STRING,
          hljs.HASH_COMMENT_MODE
        ]
      }
    ]
  };
  SUBST.contains = [
    STRING,
    NUMBER,
    PROMPT
  ];
  return {
    name: "Python",
    aliases: [
      "py",
      "gyp",
      "ipython"
    ],
    unicodeRegex: true,
    keywords: KEYWORDS,
    illegal: /(<\/|\?)|=>/,
    contains: [
      PROMPT,
      NUMBER,
      {
        // very common convention
        scope: "variable.language",
        match: /\bself\b/
      },
      {
        // eat "if" prior to string so that it won't accidentally be
        // labeled as an f-string
        beginKeywords: "if",
        relevance: 0
      },
      { match: /\bor\b/, scope: "keyword" },
      STRING,
      COMMENT_TYPE,
      hljs.HASH_COMMENT_MODE,
      {
        match: [
          /\bdef/,
          /\s+/,
          IDENT_RE
        ],
        scope: {
          1: "keyword",
          3: "title.function"
        },
        contains: [PARAMS]
      },
      {
        variants: [
          {
            match: [
              /\bclass/,
              /\s+/,
              IDENT_RE,
              /\s*/,
              /\(\s*/,
              IDENT_RE,
              /\s*\)/
            ]
          },
          {
            match: [
              /\bclass/,
              /\s+/,
              IDENT_RE
            ]
          }
        ],
        scope: {
          1: "keyword",
          3: "title.class",
          6: "title.class.inherited"
        }
      },
      {
        className: "meta",
        begin: /^[\t ]*@/,
        end: /(?=#)|$/,
        contains: [
          NUMBER,
          PARAMS,
          STRING
        ]
      }
    ]
  };
}

// src/panel/highlight.ts
core_default.registerLanguage("python", python);
core_default.registerLanguage("bash", bash);
var ENTITIES = {
  "&amp;": "&",
  "&lt;": "<",
  "&gt;": ">",
  "&quot;": '"',
  "&#x27;": "'",
  "&#39;": "'"
};
function highlightCode(source, language) {
  const code = document.createElement("code");
  const lang = core_default.getLanguage(language) ? language : null;
  code.className = `ja-code hljs${lang ? ` language-${lang}` : ""}`;
  if (!lang || !spansInto(code, highlighted(source, lang)))
    code.replaceChildren(document.createTextNode(source));
  return code;
}
function highlighted(source, language) {
  try {
    return core_default.highlight(source, { language, ignoreIllegals: true }).value;
  } catch {
    return "";
  }
}
function spansInto(into, html) {
  if (!html) return false;
  const stack = [into];
  const token = /<span class="([\w\- ]+)">|<\/span>|[^<]+/gy;
  let at = 0;
  for (let m = token.exec(html); m; m = token.exec(html)) {
    at = token.lastIndex;
    const top = stack[stack.length - 1];
    if (m[1] !== void 0) {
      const span = document.createElement("span");
      span.className = m[1];
      top.append(span);
      stack.push(span);
    } else if (m[0] === "</span>") {
      if (stack.length === 1) return false;
      stack.pop();
    } else {
      const text = m[0].replace(
        /&(?:amp|lt|gt|quot|#x27|#39);/g,
        (e) => ENTITIES[e]
      );
      top.append(document.createTextNode(text));
    }
  }
  return at === html.length && stack.length === 1;
}

// src/panel/wire.ts
var CONTROL_TOOLS = [
  "ask_user",
  "send_update",
  "submit_plan",
  "task_complete",
  "update_plan_step"
];

// src/panel/labels.ts
var CONTROL_TOOLS2 = new Set(CONTROL_TOOLS);
var STEP_LABELS = {
  pending: "pending",
  in_progress: "in progress",
  done: "done",
  skipped: "skipped"
};
var NAME_CHARS = 80;
function nameOf(text) {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > NAME_CHARS ? `${line.slice(0, NAME_CHARS - 1)}…` : line;
}
function toolLabel(name) {
  const mcp = /^mcp__(.+?)__(.+)$/.exec(name);
  return mcp ? `${mcp[1]} · ${mcp[2]}` : name;
}
var CELL_TOOLS = /* @__PURE__ */ new Set([
  "run_cell",
  "wait_for_cell"
]);

// src/panel/tool-card.ts
function elapsed(ms) {
  const seconds = Math.max(0, Math.floor(ms / 1e3));
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${seconds % 60} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}
function startTicker(card, status) {
  let since = Date.now();
  let waited = false;
  const timer = setInterval(() => {
    if (card.isConnected === false) {
      clearInterval(timer);
      return;
    }
    if (card.dataset.state === "waiting") {
      waited = true;
      return;
    }
    if (waited) {
      waited = false;
      since = Date.now();
    }
    status.textContent = `running… ${elapsed(Date.now() - since)}`;
  }, 1e3);
  timer.unref?.();
  return () => clearInterval(timer);
}
function toolCard(e) {
  const status = h("span", { class: "ja-tool-status", text: "running…" });
  const errorLine = h("span", { class: "ja-tool-error-line", hidden: true });
  const summaryText = e.summary || toolLabel(e.name);
  const cells = inputCells(e.input);
  const summarySpan = h(
    "span",
    { class: "ja-tool-summary" },
    withCellLinks(summaryText, cells)
  );
  const summary = h(
    "summary",
    {},
    h("span", { class: "ja-tool-icon", "aria-hidden": "true", text: "⚙" }),
    summarySpan,
    status,
    errorLine
  );
  const input = h("pre", { class: "ja-pre", text: clip(pretty(e.input)) });
  const output = h("pre", { class: "ja-pre ja-tool-output", hidden: true });
  const result = h("div", { class: "ja-tool-result" });
  const card = h(
    "details",
    {
      class: "ja-tool",
      "data-tool": e.name,
      "data-state": "running",
      "aria-label": `Tool: ${nameOf(summarySpan.textContent ?? summaryText)}`
    },
    summary,
    h(
      "div",
      { class: "ja-tool-body" },
      h("div", { class: "ja-label", text: "Input" }),
      input,
      output,
      result
    )
  );
  if (CONTROL_TOOLS2.has(e.name)) card.hidden = true;
  const tool = {
    card,
    summary: summarySpan,
    summaryText,
    cells,
    status,
    errorLine,
    output,
    result
  };
  if (CELL_TOOLS.has(e.name)) {
    tool.lastLine = h("span", { class: "ja-tool-last-line", hidden: true });
    summary.append(tool.lastLine);
    tool.stopTicker = startTicker(card, status);
  }
  return tool;
}
function showLastLine(tool, line) {
  if (!tool.lastLine) return false;
  tool.lastLine.hidden = !line;
  tool.lastLine.textContent = line;
  tool.lastLine.title = line;
  return true;
}
function subagentBox(e) {
  const status = h("span", { class: "ja-tool-status", text: "running…" });
  const task = e.task ?? "";
  const body = h("div", { class: "ja-subagent-body" });
  const box = h(
    "details",
    {
      class: "ja-subagent",
      open: true,
      "data-state": "running",
      "data-session": e.child_session_id,
      "aria-label": `Subagent (${e.agent_type}): ${nameOf(task)}`
    },
    h(
      "summary",
      {},
      h("span", { class: "ja-subagent-role", text: `↳ ${e.agent_type}` }),
      h("span", { class: "ja-subagent-task", text: task }),
      status
    ),
    body
  );
  return { box, status, body };
}
function endSubagent(sub, e) {
  const state = e.state ?? "completed";
  sub.box.dataset.state = state;
  sub.status.textContent = state;
}
function waitForUser(tool, waiting) {
  tool.card.dataset.state = waiting ? "waiting" : "running";
  tool.status.textContent = waiting ? "waiting for you" : "running…";
}
function endTool(tool, e) {
  const { card, status, result } = tool;
  tool.stopTicker?.();
  if (tool.lastLine) tool.lastLine.hidden = true;
  const failed = e.is_error || Boolean(e.error_line);
  card.dataset.state = failed ? "error" : "done";
  const took = e.duration ? ` · ${e.duration < 1 ? `${Math.round(e.duration * 1e3)} ms` : `${e.duration.toFixed(1)} s`}` : "";
  status.textContent = `${failed ? "failed" : "done"}${took}`;
  tool.errorLine.hidden = !e.error_line;
  tool.errorLine.textContent = e.error_line ?? "";
  let shown = e.result;
  const diffHead = e.diff ? e.diff.split("\n", 1)[0] : "";
  const at = diffHead ? shown.indexOf(diffHead) : -1;
  if (at > 0) shown = shown.slice(0, at).trimEnd();
  const data = e.data ?? {};
  if (typeof data.cell_id === "string" && data.cell_id)
    tool.cells.set(data.cell_id, tool.cells.get(data.cell_id));
  const positions = data.positions;
  if (positions && typeof positions === "object") {
    for (const [id, n] of Object.entries(positions))
      if (typeof n === "number") tool.cells.set(id, n);
  }
  if (tool.cells.size) {
    tool.summary.replaceChildren(
      ...withCellLinks(tool.summaryText, tool.cells)
    );
    card.setAttribute(
      "aria-label",
      `Tool: ${nameOf(tool.summary.textContent ?? tool.summaryText)}`
    );
  }
  result.replaceChildren(
    h("div", { class: "ja-label", text: e.is_error ? "Error" : "Result" }),
    h("pre", { class: "ja-pre" }, withCellLinks(clip(shown), tool.cells))
  );
  if (e.diff) {
    result.append(
      h("div", { class: "ja-label", text: "Diff" }),
      renderDiff(e.diff)
    );
    card.open = true;
  }
  if (CONTROL_TOOLS2.has(e.name) && e.is_error) card.hidden = false;
}
function renderDiff(diff) {
  const pre = h("pre", { class: "ja-pre ja-diff" });
  for (const line of String(diff).split("\n")) {
    let cls = "ja-diff-context";
    if (line.startsWith("+++") || line.startsWith("---")) cls = "ja-diff-file";
    else if (line.startsWith("@@")) cls = "ja-diff-hunk";
    else if (line.startsWith("+")) cls = "ja-diff-add";
    else if (line.startsWith("-")) cls = "ja-diff-del";
    pre.append(h("span", { class: cls, text: `${line}
` }));
  }
  return pre;
}

// src/panel/approval-card.ts
function previewSection(preview) {
  if (preview.kind === "cell") return cellPreview(preview);
  if (preview.kind === "command") return commandPreview(preview);
  if (preview.kind === "file") return filePreview(preview);
  return null;
}
function cellWhere(p) {
  return p.index !== null && p.index !== void 0 ? `cell ${p.index}${p.count ? ` of ${p.count}` : ""}` : "a cell";
}
function approvalName(e) {
  const preview = e.preview;
  if (preview?.kind === "cell" && preview.index)
    return `Approval: run ${cellWhere(preview)}`;
  const summary = nameOf(e.summary || e.tool_name);
  return `Approval: ${summary.charAt(0).toLowerCase()}${summary.slice(1)}`;
}
function cellPreview(p) {
  const where = cellWhere(p);
  const link2 = cellLink(p.cell_id, where);
  return h(
    "div",
    { class: "ja-preview ja-preview-cell" },
    h("p", { class: "ja-preview-where" }, "Runs ", link2, ":"),
    h(
      "pre",
      { class: "ja-pre ja-code-block" },
      highlightCode(clip(p.source), p.language || "python")
    )
  );
}
var EFFECT_LABELS = {
  inert: "changes nothing",
  reads: "only reads",
  writes: "writes",
  runs_code: "runs code",
  unknown: "unknown"
};
function commandPreview(p) {
  const programs = (p.programs || []).map(
    (program) => h(
      "li",
      { "data-effect": program.effect },
      h("code", { text: program.text }),
      " ",
      h("span", {
        class: "ja-effect",
        text: EFFECT_LABELS[program.effect] ?? program.effect
      }),
      program.note && program.note !== EFFECT_LABELS[program.effect] ? ` — ${program.note}` : "",
      (program.writes || []).length ? ` (${(program.writes || []).join(", ")})` : ""
    )
  );
  const redirects = (p.redirects || []).map(
    (text) => h(
      "li",
      { "data-effect": "writes" },
      h("code", { text }),
      " ",
      h("span", { class: "ja-effect", text: "writes" }),
      " — a redirection"
    )
  );
  return h(
    "div",
    { class: "ja-preview ja-preview-command" },
    h(
      "pre",
      { class: "ja-pre ja-code-block" },
      highlightCode(clip(p.command), "bash")
    ),
    p.working_dir && p.working_dir !== "." ? h("p", { class: "ja-meta", text: `in ${p.working_dir}` }) : null,
    programs.length || redirects.length ? h(
      "ul",
      { class: "ja-programs", "aria-label": "What it runs" },
      programs,
      redirects
    ) : null,
    p.sandbox ? h("p", { class: "ja-preview-sandbox", text: `Sandbox: ${p.sandbox}` }) : null
  );
}
var FILE_ACTIONS = {
  create: "Creates",
  overwrite: "Replaces",
  edit: "Edits",
  delete: "Deletes"
};
function filePreview(p) {
  return h(
    "div",
    { class: "ja-preview ja-preview-file" },
    h(
      "p",
      { class: "ja-preview-where" },
      `${FILE_ACTIONS[p.action] ?? p.action} `,
      h("code", { text: p.path })
    ),
    p.diff ? renderDiff(clip(p.diff)) : h("p", { class: "ja-meta", text: "Not a text file: no diff to show." })
  );
}
function approvalCard(e, decide) {
  const remember = e.remember ?? null;
  const options = e.remember_options || [];
  const first = options[0] ?? null;
  const allow = h("button", {
    type: "button",
    class: "ja-primary",
    text: "Allow"
  });
  const always = h("button", {
    type: "button",
    class: "ja-always",
    text: first ? first.label : "Always allow",
    hidden: remember === null && first === null
  });
  const more = h("button", {
    type: "button",
    class: "ja-always-more",
    "aria-label": "Other scopes",
    "aria-haspopup": "menu",
    "aria-expanded": "false",
    text: "▾",
    hidden: options.length < 2
  });
  const menu = h("div", {
    class: "ja-always-menu",
    role: "menu",
    "aria-label": "“Always allow” scopes",
    hidden: true
  });
  const deny = h("button", {
    type: "button",
    class: "ja-danger",
    text: "Deny"
  });
  const items = options.map(
    (option) => h("button", {
      type: "button",
      role: "menuitem",
      class: "ja-scope",
      "data-scope": option.id,
      title: `Remembers for this session: ${(option.rules || []).join("; ")}`,
      text: option.label
    })
  );
  menu.append(...items);
  const buttons = [allow, always, more, ...items, deny];
  const answered = h("p", { class: "ja-answered", hidden: true });
  const warnings = (e.warnings || []).map((text) => h("li", { text }));
  const cells = inputCells(e.input);
  if (e.preview?.kind === "cell" && e.preview.index)
    cells.set(e.preview.cell_id, e.preview.index);
  const card = h(
    "section",
    { class: "ja-card ja-approval ja-flash", "aria-label": approvalName(e) },
    h(
      "div",
      { class: "ja-card-head" },
      h("h3", { text: "Approval needed" }),
      h("span", { class: "ja-badge", text: toolLabel(e.tool_name) })
    ),
    h("p", { class: "ja-approval-summary" }, withCellLinks(e.summary, cells)),
    e.preview ? previewSection(e.preview) : null,
    warnings.length ? h(
      "ul",
      { class: "ja-warnings", role: "alert", "aria-label": "Warnings" },
      warnings
    ) : null,
    e.reason ? h("p", { class: "ja-context", text: e.reason }) : null,
    h("p", {
      class: "ja-remember",
      text: remember === null ? "“Always allow” is not offered: a call like this asks every time." : `“Always allow” remembers: ${remember}.`
    }),
    h(
      "details",
      { class: "ja-raw-input" },
      h("summary", { text: "Input" }),
      h("pre", { class: "ja-pre", text: clip(pretty(e.input)) })
    ),
    h(
      "div",
      { class: "ja-actions" },
      allow,
      h("span", { class: "ja-always-group" }, always, more, menu),
      deny
    ),
    answered
  );
  if (remember !== null)
    always.title = `Remembers for this session: ${remember}`;
  const parts = { card, buttons, answered };
  const closeMenu = () => {
    menu.hidden = true;
    more.setAttribute("aria-expanded", "false");
  };
  allow.addEventListener("click", () => decide(parts, true, false, null));
  always.addEventListener(
    "click",
    () => decide(parts, true, true, first ? first.id : null)
  );
  more.addEventListener("click", () => {
    menu.hidden = !menu.hidden;
    more.setAttribute("aria-expanded", String(!menu.hidden));
    if (!menu.hidden) items[0]?.focus();
  });
  const closeOnEscape = (event) => {
    const key = event;
    if (key.key !== "Escape" || menu.hidden || key.isComposing) return;
    key.preventDefault();
    key.stopPropagation();
    closeMenu();
    more.focus();
  };
  more.addEventListener("keydown", closeOnEscape);
  menu.addEventListener("keydown", closeOnEscape);
  items.forEach(
    (item, i) => item.addEventListener("click", () => {
      closeMenu();
      decide(parts, true, true, options[i].id);
    })
  );
  deny.addEventListener("click", () => decide(parts, false, false, null));
  return parts;
}

// src/panel/plan-card.ts
function listSection(title, items, cls) {
  if (!items || !items.length) return null;
  return h(
    "div",
    { class: `ja-list ${cls}` },
    h("strong", { text: `${title}:` }),
    h(
      "ul",
      {},
      items.map((item) => h("li", { text: item }))
    )
  );
}
function planCard(plan) {
  const rows = plan.steps.map((step) => {
    const status = h("td", {
      class: "ja-step-status",
      "data-status": "pending",
      text: "pending"
    });
    const row = h(
      "tr",
      { "data-step": step.step_number },
      h("td", { class: "ja-step-number", text: String(step.step_number) }),
      h("td", { text: step.action }),
      h("td", { text: step.reason || "" }),
      h("td", { text: (step.tools_needed || []).join(", ") }),
      h("td", { text: step.estimated_time || "" }),
      status
    );
    return [step.step_number, { row, status }];
  });
  const table = h(
    "table",
    { class: "ja-plan-table" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["#", "Action", "Reason", "Tools", "Time", "Status"].map(
          (t) => h("th", { scope: "col", text: t })
        )
      )
    ),
    h(
      "tbody",
      {},
      rows.map(([, r]) => r.row)
    )
  );
  const button = h("button", {
    type: "button",
    class: "ja-primary ja-execute",
    text: "Execute plan"
  });
  const card = h(
    "section",
    { class: "ja-card ja-plan", "aria-label": `Plan: ${nameOf(plan.goal)}` },
    h("h3", { text: "Plan" }),
    h("p", { class: "ja-goal" }, h("strong", { text: "Goal: " }), plan.goal),
    table,
    plan.estimated_total_time ? h(
      "p",
      { class: "ja-meta" },
      h("strong", { text: "Estimated total: " }),
      plan.estimated_total_time
    ) : null,
    listSection("Risks", plan.risks, "ja-risks"),
    listSection("Prerequisites", plan.prerequisites, "ja-prerequisites"),
    h("div", { class: "ja-actions" }, button)
  );
  return { card, button, steps: new Map(rows) };
}

// src/panel/question-card.ts
var optionDescriptions = 0;
function questionCard(e, send) {
  const q = e.question;
  const card = h("section", {
    class: "ja-card ja-question ja-flash",
    "data-severity": q.severity,
    "aria-label": `Question: ${nameOf(q.question)}`
  });
  const buttons = [];
  const answered = h("p", { class: "ja-answered", hidden: true });
  const options = h("div", {
    class: "ja-options",
    role: "group",
    "aria-label": "Answer options"
  });
  const parts = { card, buttons, answered, options };
  for (const option of q.options || []) {
    const isDefault = q.default !== null && q.default !== void 0 && option.value === q.default;
    const descriptionId = option.description ? `ja-option-description-${++optionDescriptions}` : void 0;
    const button = h(
      "button",
      {
        type: "button",
        class: `ja-option${isDefault ? " ja-default" : ""}`,
        "data-value": option.value,
        "aria-describedby": descriptionId
      },
      h("span", { class: "ja-option-label", text: option.label }),
      option.description ? h("span", {
        class: "ja-option-description",
        id: descriptionId,
        "aria-hidden": "true",
        text: option.description
      }) : null
    );
    button.addEventListener("click", () => send(parts, option.value, button));
    buttons.push(button);
    options.append(button);
  }
  let free = null;
  if (q.allow_custom || !(q.options || []).length) {
    const input = h("input", {
      type: "text",
      class: "ja-free-input",
      "aria-label": "Your answer",
      placeholder: "Type your answer…"
    });
    const submit = h("button", { type: "submit", text: "Answer" });
    free = h("form", { class: "ja-free" }, input, submit);
    free.addEventListener("submit", (event) => {
      event.preventDefault();
      if (!input.value.trim()) return;
      send(parts, input.value, null);
    });
    buttons.push(input, submit);
  }
  const children = [
    h(
      "div",
      { class: "ja-card-head" },
      h("h3", { text: "Question" }),
      h("span", { class: "ja-badge", text: q.severity })
    ),
    h("p", { class: "ja-question-text", text: q.question }),
    q.context ? h("p", { class: "ja-context", text: q.context }) : null,
    (q.options || []).length ? options : null,
    free,
    answered
  ];
  card.append(...children.filter((c) => Boolean(c)));
  return parts;
}

// src/panel/context.ts
var CONTEXT_HIGH = 0.7;
var CONTEXT_FULL = 0.9;
var WHY = {
  auto: "the context window was filling up",
  manual: "you asked",
  too_long: "the API said the prompt was too long"
};
function count(n) {
  return n.toLocaleString("en-US");
}
function tokens(n) {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${Math.round(n / 1e3)}k`;
  return String(Math.round(n));
}
function contextText(context) {
  if (!context || !context.window || context.used_tokens === void 0)
    return "";
  const used = context.used_tokens;
  const share = Math.round(100 * used / context.window);
  let text = `Context ${share}% · ${tokens(used)} / ${tokens(context.window)}`;
  if (context.estimated) text += " (estimated)";
  else if (used > 0 && context.cached_tokens)
    text += ` · ${Math.round(100 * context.cached_tokens / used)}% cached`;
  return text;
}
function describeCompaction(e) {
  const done = [];
  const cleared = e.cleared ?? 0;
  const summarised = e.summarised ?? 0;
  if (cleared)
    done.push(`cleared ${cleared} old tool result${cleared !== 1 ? "s" : ""}`);
  if (summarised)
    done.push(
      `summarised ${summarised} earlier message${summarised !== 1 ? "s" : ""}`
    );
  return `Compacted the conversation (${WHY[e.reason] ?? e.reason}): ${done.join(" and ")}; about ${count(e.tokens_before ?? 0)} → ${count(e.tokens_after ?? 0)} tokens.`;
}
function compactionMarker(e) {
  const marker = h(
    "div",
    { class: "ja-compaction" },
    h("div", {
      class: "ja-compaction-line",
      text: `⇣ ${describeCompaction(e)}`
    })
  );
  if (e.summary)
    marker.append(
      h(
        "details",
        { class: "ja-compaction-summary" },
        h("summary", { text: "Summary" }),
        h("div", { class: "ja-compaction-text", text: e.summary })
      )
    );
  return marker;
}
var ContextGauge = class {
  /** `compact`: what Compact now does (the view sends the command). */
  constructor(compact) {
    this.fill = h("span", { class: "ja-context-fill" });
    this.meter = h(
      "div",
      {
        class: "ja-context-bar",
        role: "meter",
        "aria-label": "Context window used",
        "aria-valuemin": 0,
        "aria-valuemax": 100,
        "aria-valuenow": 0
      },
      this.fill
    );
    this.label = h("span", { class: "ja-context-text" });
    this.button = h("button", {
      type: "button",
      class: "ja-compact",
      text: "Compact now",
      title: "Clear old tool results and summarise earlier turns, so the conversation takes less of the context window (the saved history stays whole)"
    });
    this.button.addEventListener("click", () => {
      this.button.disabled = true;
      compact();
    });
    this.gauge = h(
      "span",
      { class: "ja-context-gauge" },
      this.meter,
      this.label
    );
    this.el = h("div", { class: "ja-context" }, this.gauge, this.button);
  }
  /** Show `context`; the button works when a run could start and there is a conversation. */
  update(context, busy) {
    const text = contextText(context);
    this.gauge.hidden = !text;
    this.label.textContent = text;
    this.button.disabled = busy || !text;
    if (!text || !context?.window) return;
    const used = context.used_tokens ?? 0;
    const share = Math.min(1, used / context.window);
    const percent = Math.round(100 * share);
    this.meter.setAttribute("aria-valuenow", String(percent));
    this.meter.setAttribute(
      "aria-valuetext",
      `${percent}%: ${count(used)} of ${count(context.window)} tokens` + (context.estimated ? " (estimated)" : "")
    );
    this.meter.dataset.level = share >= CONTEXT_FULL ? "full" : share >= CONTEXT_HIGH ? "high" : "ok";
    this.fill.setAttribute("style", `width: ${percent}%`);
    this.meter.title = `${count(used)} of ${count(context.window)} tokens`;
  }
};

// src/panel/interrupt.ts
function pageConfig() {
  const node = document.getElementById("jupyter-config-data");
  if (!node) return null;
  try {
    return JSON.parse(node.textContent || "{}");
  } catch {
    return null;
  }
}
function cookie(name) {
  const match = document.cookie.match(new RegExp(`(?:^|;\\s*)${name}=([^;]*)`));
  return match ? decodeURIComponent(match[1]) : "";
}
function interruptKernel(kernelId) {
  const event = new CustomEvent("jupyter-agent:interrupt", {
    detail: { kernelId },
    cancelable: true
  });
  if (!document.dispatchEvent(event) || !kernelId)
    return Promise.resolve(false);
  const config = pageConfig();
  if (!config) return Promise.resolve(false);
  let base = config.baseUrl || "/";
  if (!base.endsWith("/")) base += "/";
  const headers = {
    "Content-Type": "application/json"
  };
  const xsrf = cookie("_xsrf");
  if (xsrf) headers["X-XSRFToken"] = xsrf;
  if (config.token) headers.Authorization = `token ${config.token}`;
  return fetch(`${base}api/kernels/${encodeURIComponent(kernelId)}/interrupt`, {
    method: "POST",
    headers,
    credentials: "same-origin"
  }).then(
    (response) => response.ok,
    () => false
  );
}

// src/panel/model-picker.ts
var ModelPicker = class {
  constructor(choose) {
    this.choose = choose;
    this.choices = [];
    this.select = h("select", { "aria-label": "Model" });
    this.el = h("label", { class: "ja-model-picker" }, "Model ", this.select);
    this.select.addEventListener("change", () => {
      const wanted = this.select.value;
      this.choose(wanted).catch(() => this.show(this.choices));
    });
  }
  /** List `choices` (the kernel's `models` trait), the current one selected. */
  show(choices) {
    this.choices = choices ?? [];
    this.select.replaceChildren(
      ...this.choices.map((choice) => {
        const option = h("option", {
          value: choice.id,
          text: choice.ready ? choice.label : `${choice.label} (set-up needed)`,
          title: choice.setup || choice.provider || void 0
        });
        option.selected = choice.current;
        return option;
      })
    );
    const current = this.choices.find((choice) => choice.current);
    if (current) this.select.value = current.id;
    this.el.hidden = this.choices.length < 2;
  }
  /** The picker waits while a run goes on: a switch applies to the next run. */
  setBusy(busy) {
    this.select.disabled = busy;
  }
};

// src/panel/plan-strip.ts
var GOAL_CHARS = 90;
var PlanStrip = class {
  /** `execute`: what the strip's button does (the same as the plan card's). */
  constructor(execute) {
    this.goal = h("div", { class: "ja-strip-goal" });
    this.step = h("div", { class: "ja-strip-step" });
    this.count = h("span", { class: "ja-strip-count" });
    this.button = h("button", {
      type: "button",
      class: "ja-primary ja-strip-execute"
    });
    this.button.addEventListener("click", () => {
      this.button.disabled = true;
      execute();
    });
    this.ended = h("span", { class: "ja-strip-done", text: "✔ Plan done" });
    this.el = h(
      "section",
      {
        class: "ja-plan-strip",
        // A group, not a region: the plan card is the region named Plan.
        role: "group",
        "aria-label": "Plan progress",
        hidden: true
      },
      this.goal,
      h(
        "div",
        { class: "ja-strip-row" },
        this.step,
        this.count,
        this.button,
        this.ended
      )
    );
  }
  update(progress) {
    this.el.hidden = progress === null;
    if (progress === null) return;
    const { goal, steps, current } = progress;
    this.goal.title = goal;
    this.goal.textContent = `Plan: ${goal.length > GOAL_CHARS ? `${goal.slice(0, GOAL_CHARS - 1)}…` : goal}`;
    this.step.replaceChildren();
    if (current) {
      const status = h("span", {
        class: "ja-step-status",
        "data-status": current.status,
        text: current.status === "stopped" ? "stopped" : STEP_LABELS[current.status] ?? current.status
      });
      this.step.append(
        h("span", {
          class: "ja-strip-title",
          text: `Step ${current.number} of ${steps.length}: ${current.action}`,
          title: current.action
        }),
        " ",
        status
      );
    }
    this.step.hidden = current === null;
    this.count.textContent = `${progress.done} of ${steps.length} done`;
    this.button.hidden = progress.action === null;
    this.button.textContent = progress.action ?? "";
    this.button.disabled = progress.disabled;
    this.ended.hidden = !progress.finished;
    this.el.dataset.state = progress.finished ? "done" : progress.running ? "running" : progress.action === "Continue plan" ? "stopped" : "review";
  }
};

// src/panel/replies.ts
var SLOW_REPLY = 1500;
var Replies = class {
  /** `send`: the anywidget model's `send`, to the kernel. */
  constructor(viewId, send) {
    this.viewId = viewId;
    this.send = send;
    this.nextId = 1;
    this.waiting = /* @__PURE__ */ new Map();
    /** Shown while a command waits longer than SLOW_REPLY (the caller places it). */
    this.waitNote = h("div", {
      class: "ja-line ja-note ja-wait",
      hidden: true,
      text: "Sent. The kernel is running a cell; it reads this when the cell ends."
    });
  }
  /** Send a command; the promise settles with its reply. */
  command(name, args) {
    return new Promise((resolve, reject) => {
      const id = `${this.viewId}:${this.nextId++}`;
      const pending = { resolve, reject, slow: false };
      pending.timer = setTimeout(() => {
        pending.slow = true;
        this.showWaitNote();
      }, SLOW_REPLY);
      this.waiting.set(id, pending);
      this.send({ type: "command", id, name, ...args });
    });
  }
  /** A reply: settles the command it answers. False when it answers none of this view's. */
  settle(reply) {
    const pending = reply.id === null ? void 0 : this.waiting.get(reply.id);
    if (!pending || reply.id === null) return false;
    this.waiting.delete(reply.id);
    clearTimeout(pending.timer);
    this.showWaitNote();
    if (reply.ok) pending.resolve(reply);
    else pending.reject(new Error(reply.error || "The command failed."));
    return true;
  }
  /** The view is gone: no timer is left behind (its promises never settle). */
  dispose() {
    for (const pending of this.waiting.values()) clearTimeout(pending.timer);
    this.waiting.clear();
  }
  showWaitNote() {
    this.waitNote.hidden = ![...this.waiting.values()].some((p) => p.slow);
  }
};

// src/panel/session-search.ts
var SEARCH_DELAY = 250;
var SessionSearch = class {
  constructor(actions) {
    this.actions = actions;
    this.asked = 0;
    this.input = h("input", {
      type: "search",
      class: "ja-session-search",
      autocomplete: "off",
      "aria-label": "Search sessions",
      placeholder: "Words from a past session…"
    });
    this.status = h("div", {
      class: "ja-search-status",
      role: "status",
      "aria-live": "polite"
    });
    this.results = h("div", {
      class: "ja-search-results",
      role: "group",
      "aria-label": "Matching sessions"
    });
    this.el = h(
      "div",
      { class: "ja-session-search-box" },
      h("label", {}, "Search sessions ", this.input),
      this.status,
      this.results
    );
    this.input.addEventListener("input", () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.run(), SEARCH_DELAY);
    });
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") {
        event.preventDefault();
        this.run();
      } else if (event.key === "Escape" && this.input.value) {
        event.preventDefault();
        event.stopPropagation();
        this.input.value = "";
        this.run();
      }
    });
  }
  /** Search for what the box holds now (an empty box clears the results). */
  run() {
    clearTimeout(this.timer);
    const query = this.input.value.trim();
    const asked = ++this.asked;
    if (!query) {
      this.status.textContent = "";
      this.results.replaceChildren();
      return;
    }
    this.status.textContent = "Searching…";
    this.actions.search(query).then(
      (found) => {
        if (asked === this.asked) this.show(query, found);
      },
      (error) => {
        if (asked !== this.asked) return;
        this.results.replaceChildren();
        this.status.textContent = error.message;
      }
    );
  }
  /** Enable the result buttons, or not while the agent works (resuming needs it idle). */
  refresh() {
    const busy = this.actions.busy();
    for (const button of this.results.querySelectorAll("button"))
      button.disabled = busy;
  }
  dispose() {
    clearTimeout(this.timer);
    this.asked++;
  }
  show(query, found) {
    this.status.textContent = found.length ? `${found.length} past session${found.length === 1 ? "" : "s"} match “${query}”.` : `No past session matches “${query}”.`;
    this.results.replaceChildren(...found.map((f) => this.hit(f)));
    this.refresh();
  }
  hit(found) {
    const when = new Date(found.said * 1e3).toLocaleString();
    const who = found.label ? `${found.role} (${found.label})` : found.role;
    const passage = found.parts.map(
      (text, i) => i % 2 ? h("mark", { text }) : text
    );
    return h(
      "button",
      {
        type: "button",
        class: "ja-search-hit",
        "data-session": found.id,
        title: `Resume this session (${found.matches} matching passage${found.matches === 1 ? "" : "s"})`,
        onclick: () => this.actions.resume(found.id)
      },
      h("span", { class: "ja-search-title", text: found.title }),
      h("span", { class: "ja-search-when", text: ` — ${when}` }),
      h("span", { class: "ja-search-passage" }, `${who}: `, ...passage)
    );
  }
};

// src/panel/setup-box.ts
var SetupBox = class {
  /** `sendKey`: the set_key command; `error`: shows a sentence to the user. */
  constructor(sendKey, error) {
    this.sendKey = sendKey;
    this.error = error;
    const keyInput = h("input", {
      type: "password",
      autocomplete: "off",
      spellcheck: "false",
      class: "ja-key",
      "aria-label": "API key",
      placeholder: "sk-ant-…"
    });
    const useKeyButton = h("button", {
      type: "submit",
      class: "ja-primary",
      text: "Use for this session",
      title: "Kept in the kernel's memory until it restarts; never in the notebook"
    });
    const saveKeyButton = h("button", {
      type: "button",
      text: "Save for my user",
      title: "Saved in ~/.jupyter_agent/credentials.json, readable only by you"
    });
    const setupWhy = h("div", { class: "ja-setup-why" });
    const setup = h(
      "form",
      { class: "ja-setup", hidden: true, "aria-label": "Set up the model" },
      h("div", { class: "ja-setup-title", text: "Set up the model" }),
      setupWhy,
      h("label", { class: "ja-key-label" }, "API key ", keyInput),
      h("div", { class: "ja-buttons" }, useKeyButton, saveKeyButton),
      h("div", {
        class: "ja-note",
        text: "The key never goes into the notebook: it stays in the kernel for this session, or in a file only you can read when you save it. %agent login in a cell does the same."
      }),
      h(
        "details",
        { class: "ja-setup-more" },
        h("summary", { text: "Other ways to get going" }),
        h(
          "ul",
          {},
          h("li", {
            text: 'Try it offline with a scripted replay: model = ScriptedModel("replay.json"), then %agent --model $model (the tutorials in notebooks/ run this way).'
          }),
          h("li", {
            text: "Set ANTHROPIC_API_KEY in the environment Jupyter starts in."
          }),
          h("li", {
            text: "OpenAI: set OPENAI_API_KEY, then choose openai:gpt-5 in Model (or %agent model openai:gpt-5)."
          }),
          h("li", {
            text: "A model on this machine: with Ollama running, %agent model ollama:qwen3; any OpenAI-compatible server (vLLM, LM Studio, LiteLLM): %agent model openai-compatible:NAME@URL."
          }),
          h("li", {
            text: "Claude on Amazon Bedrock or Google Vertex AI: %agent model bedrock:MODEL_ID or vertex:MODEL_ID, with your cloud credentials."
          })
        )
      )
    );
    this.el = setup;
    this.why = setupWhy;
    setup.addEventListener("submit", (event) => {
      event.preventDefault();
      this.use(false, keyInput, [useKeyButton, saveKeyButton]);
    });
    saveKeyButton.addEventListener(
      "click",
      () => this.use(true, keyInput, [useKeyButton, saveKeyButton])
    );
  }
  /** Show the box with why the model cannot be called, or hide it (`null`). */
  show(why) {
    this.el.hidden = why === null;
    this.why.textContent = why ?? "";
  }
  use(save, input, buttons) {
    const key = input.value.trim();
    input.value = "";
    if (!key) {
      this.error("Enter an API key first.");
      input.focus();
      return;
    }
    buttons.forEach((b) => b.disabled = true);
    this.sendKey(key, save).catch((error) => this.error(error.message)).finally(() => buttons.forEach((b) => b.disabled = false));
  }
};

// src/panel/status-text.ts
function statusText(model) {
  const status = model.get("status");
  const detail = model.get("detail");
  switch (status) {
    case "idle":
      return "ready";
    case "running":
      return "working…";
    case "thinking":
      return "thinking…";
    case "tool_executing":
      return `running tool ${detail || "…"}`;
    case "waiting_user":
      return `waiting for you${detail ? ` (${detail.replace(/^waiting for /, "")})` : ""}`;
    case "paused":
      return "paused";
    case "completed":
      return model.get("plan_ready") ? "plan ready for review" : "completed";
    case "cancelled":
      return `stopped: ${detail || (model.get("stop_reason") || "").replace(/_/g, " ")}`;
    case "error":
      return `error: ${detail}`;
    default: {
      const unknown = status;
      return String(unknown);
    }
  }
}
function number(n) {
  return Number(n || 0).toLocaleString("en-US");
}
function usageText(usage) {
  if (!usage || usage.run_input_tokens === void 0) return "";
  const cached = (input, read) => input ? ` (${Math.round(100 * read / input)}% cached)` : "";
  const cost = (usd, unpriced) => {
    if (usd === void 0) return "";
    const dollars = `$${Number(usd).toFixed(4)}`;
    if (!unpriced) return ` · ${dollars}`;
    if (!usd) return " · cost unknown";
    return ` · ${dollars} + unknown (${unpriced} ${unpriced === 1 ? "call" : "calls"} unpriced)`;
  };
  return `Run: ${number(usage.run_input_tokens)} in${cached(usage.run_input_tokens, usage.run_cache_read_input_tokens)}, ${number(usage.run_output_tokens)} out${cost(usage.run_cost_usd, usage.run_unpriced_calls)} — Session: ${number(usage.session_input_tokens)} in${cached(usage.session_input_tokens, usage.session_cache_read_input_tokens)}, ${number(usage.session_output_tokens)} out${cost(usage.session_cost_usd, usage.session_unpriced_calls)}`;
}

// src/panel/markdown.ts
var FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;
var HEADING = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
var RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
var QUOTE = /^ {0,3}>\s?(.*)$/;
var ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
var TABLE_RULE = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
var SAFE_URL = /^https?:\/\//i;
function indentOf(line) {
  return line.length - line.trimStart().length;
}
function isBlank(line) {
  return line.trim() === "";
}
function startsTable(lines, i) {
  return lines[i].includes("|") && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1]) && lines[i + 1].includes("-");
}
function startsBlock(lines, i) {
  const line = lines[i];
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || ITEM.test(line) || startsTable(lines, i);
}
function splitRow(line) {
  let row = line.trim();
  if (row.startsWith("|")) row = row.slice(1);
  if (row.endsWith("|") && !row.endsWith("\\|")) row = row.slice(0, -1);
  return row.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
}
function renderMarkdown(source) {
  const fragment = document.createDocumentFragment();
  const lines = String(source ?? "").replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (isBlank(line)) {
      i++;
      continue;
    }
    let m = FENCE.exec(line);
    if (m) {
      const fence = m[1];
      const lang = m[2].trim().split(/\s+/)[0].replace(/[^\w+-]/g, "");
      const body = [];
      i++;
      while (i < lines.length && !(lines[i].trim().startsWith(fence) && lines[i].trim().replace(/[`~]/g, "") === "")) {
        body.push(lines[i++]);
      }
      i++;
      const code = h("code", {
        class: lang ? `language-${lang}` : void 0,
        text: body.join("\n")
      });
      fragment.append(h("pre", { class: "ja-code" }, code));
      continue;
    }
    m = HEADING.exec(line);
    if (m) {
      const heading = h(`h${Math.min(6, m[1].length + 2)}`, {
        class: "ja-md-heading"
      });
      renderInline(m[2], heading);
      fragment.append(heading);
      i++;
      continue;
    }
    if (RULE.test(line)) {
      fragment.append(h("hr"));
      i++;
      continue;
    }
    if (startsTable(lines, i)) {
      const [table, next] = renderTable(lines, i);
      fragment.append(table);
      i = next;
      continue;
    }
    m = QUOTE.exec(line);
    if (m) {
      const quoted = [];
      while (i < lines.length && (m = QUOTE.exec(lines[i]))) {
        quoted.push(m[1]);
        i++;
      }
      fragment.append(h("blockquote", {}, renderMarkdown(quoted.join("\n"))));
      continue;
    }
    if (ITEM.test(line)) {
      const [list, next] = renderList(lines, i);
      fragment.append(list);
      i = next;
      continue;
    }
    const paragraph = [];
    while (i < lines.length && !isBlank(lines[i]) && (paragraph.length === 0 || !startsBlock(lines, i))) {
      paragraph.push(lines[i].trim());
      i++;
    }
    const p = h("p");
    paragraph.forEach((text, index) => {
      if (index > 0) p.append(h("br"));
      renderInline(text, p);
    });
    fragment.append(p);
  }
  return fragment;
}
function renderTable(lines, start) {
  const header = splitRow(lines[start]);
  const aligns = splitRow(lines[start + 1]).map(
    (cell) => cell.startsWith(":") && cell.endsWith(":") ? "center" : cell.endsWith(":") ? "right" : cell.startsWith(":") ? "left" : ""
  );
  const style = (index) => aligns[index] ? `text-align:${aligns[index]}` : void 0;
  const head = h("tr");
  header.forEach((cell, index) => {
    const th = h("th", { style: style(index) });
    renderInline(cell, th);
    head.append(th);
  });
  const body = h("tbody");
  let i = start + 2;
  while (i < lines.length && !isBlank(lines[i]) && lines[i].includes("|")) {
    const row = h("tr");
    const cells = splitRow(lines[i]);
    header.forEach((_, index) => {
      const td = h("td", { style: style(index) });
      renderInline(cells[index] ?? "", td);
      row.append(td);
    });
    body.append(row);
    i++;
  }
  return [h("table", { class: "ja-md-table" }, h("thead", {}, head), body), i];
}
function renderList(lines, start) {
  const first = ITEM.exec(lines[start]);
  const base = first[1].length;
  const ordered = /\d/.test(first[2]);
  const list = h(ordered ? "ol" : "ul");
  if (ordered && parseInt(first[2], 10) !== 1)
    list.setAttribute("start", String(parseInt(first[2], 10)));
  let item = null;
  let body = [];
  let contentIndent = base + 2;
  const flush = () => {
    if (item === null) return;
    const li = item;
    const simple = body.length === 1 || body.every((line) => !isBlank(line) && !startsBlock([line.trim()], 0));
    if (simple) {
      body.forEach((text, index) => {
        if (index > 0) li.append(h("br"));
        renderInline(text.trim(), li);
      });
    } else {
      li.append(renderMarkdown(body.join("\n")));
    }
    list.append(li);
  };
  let i = start;
  while (i < lines.length) {
    const line = lines[i];
    const m = ITEM.exec(line);
    if (m && m[1].length <= base + 1 && /\d/.test(m[2]) === ordered) {
      flush();
      item = h("li");
      body = [m[3]];
      contentIndent = m[1].length + m[2].length + 1;
      i++;
      continue;
    }
    if (isBlank(line)) {
      const next = lines[i + 1];
      const nextItem = next !== void 0 && ITEM.exec(next);
      if (next !== void 0 && (indentOf(next) > base || nextItem && nextItem[1].length <= base + 1 && /\d/.test(nextItem[2]) === ordered)) {
        body.push("");
        i++;
        continue;
      }
      break;
    }
    if (indentOf(line) > base) {
      body.push(line.slice(Math.min(indentOf(line), contentIndent)));
      i++;
      continue;
    }
    if (!startsBlock(lines, i) && body.length && !isBlank(body[body.length - 1])) {
      body.push(line);
      i++;
      continue;
    }
    break;
  }
  flush();
  return [list, i];
}
function wrap(tag, inner, inLink) {
  const node = h(tag);
  renderSpans(inner, node, inLink);
  return node;
}
function link(label, url) {
  if (!SAFE_URL.test(url)) return document.createTextNode(label);
  const a = h("a", { href: url, target: "_blank", rel: "noopener noreferrer" });
  renderSpans(label, a, true);
  return a;
}
var INLINE = [
  {
    re: /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/,
    make: (m) => h("code", {
      text: m[2].trim() === "" ? m[2] : m[2].replace(/^ (.*) $/s, "$1")
    })
  },
  {
    re: /\[([^\]\n]+)\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/,
    link: true,
    make: (m) => link(m[1], m[2])
  },
  {
    re: /\*\*(?=\S)([\s\S]*?\S)\*\*/,
    make: (m, inLink) => wrap("strong", m[1], inLink)
  },
  {
    re: /(?<![\w])__(?=\S)([\s\S]*?\S)__(?![\w])/,
    make: (m, inLink) => wrap("strong", m[1], inLink)
  },
  {
    re: /\*(?=[^\s*])([\s\S]*?[^\s*])\*(?!\*)/,
    make: (m, inLink) => wrap("em", m[1], inLink)
  },
  {
    re: /(?<![\w])_(?=[^\s_])([\s\S]*?[^\s_])_(?![\w])/,
    make: (m, inLink) => wrap("em", m[1], inLink)
  },
  {
    re: /~~(?=\S)([\s\S]*?\S)~~/,
    make: (m, inLink) => wrap("del", m[1], inLink)
  },
  {
    re: /\bhttps?:\/\/[^\s<>()]*[^\s<>().,;:!?'"\]]/,
    link: true,
    make: (m) => link(m[0], m[0])
  }
];
function renderInline(text, parent) {
  renderSpans(text, parent, false);
}
function renderSpans(text, parent, inLink) {
  let rest = String(text ?? "");
  while (rest) {
    let best = null;
    for (const rule of INLINE) {
      if (inLink && rule.link) continue;
      const m = rule.re.exec(rest);
      if (m && (best === null || m.index < best.m.index)) best = { m, rule };
    }
    if (best === null) {
      parent.append(document.createTextNode(rest));
      return;
    }
    if (best.m.index > 0)
      parent.append(document.createTextNode(rest.slice(0, best.m.index)));
    parent.append(best.rule.make(best.m, inLink));
    rest = rest.slice(best.m.index + best.m[0].length);
  }
}

// src/panel/pending-cards.ts
var PendingCards = class {
  /** `focusNext`: where focus goes once a click disabled the control that had it. */
  constructor(actions, focusNext) {
    this.actions = actions;
    this.focusNext = focusNext;
    this.questions = /* @__PURE__ */ new Map();
    this.approvals = /* @__PURE__ */ new Map();
    /** An approval's request id → the tool call that waits for it. */
    this.waiting = /* @__PURE__ */ new Map();
  }
  /** A question's card, its buttons sending the answer. */
  question(e) {
    const question = questionCard(e, ({ buttons }, value, button) => {
      buttons.forEach((b) => b.disabled = true);
      if (button) button.classList.add("ja-chosen");
      this.focusNext();
      this.actions.command("answer", { question_id: e.question_id, value }).catch((error) => {
        buttons.forEach((b) => b.disabled = false);
        if (button) button.classList.remove("ja-chosen");
        this.actions.error(error.message);
      });
    });
    this.questions.set(e.question_id, question);
    return question.card;
  }
  /** A question answered (here or in another view): the chosen option marked. */
  answer(e) {
    const q = this.questions.get(e.question_id);
    if (!q) return;
    q.buttons.forEach((b) => b.disabled = true);
    for (const b of q.options.querySelectorAll("button"))
      b.classList.toggle("ja-chosen", b.dataset.value === e.value);
    q.card.classList.remove("ja-flash");
    q.card.dataset.state = "answered";
    q.answered.hidden = false;
    q.answered.textContent = `Answered: ${e.label ?? e.value}`;
  }
  /** No answer came in time. */
  timeout(e) {
    const pending = this.questions.get(e.question_id) || this.approvals.get(e.question_id);
    if (pending) close(pending, `No answer within ${e.timeout} s.`);
  }
  /** An approval's card, its buttons sending the decision; the call it holds is kept. */
  approval(e) {
    const approval = approvalCard(e, ({ buttons }, allow, remember, scope) => {
      buttons.forEach((b) => b.disabled = true);
      this.focusNext();
      this.actions.command("approve", {
        request_id: e.request_id,
        allow,
        remember,
        ...scope !== null ? { scope } : {}
      }).catch((error) => {
        buttons.forEach((b) => b.disabled = false);
        this.actions.error(error.message);
      });
    });
    this.approvals.set(e.request_id, approval);
    this.waiting.set(e.request_id, e.tool_use_id);
    return approval.card;
  }
  /** A decision on an approval: its card closed with the verdict. Returns the tool call
   * that waited for it, if any. */
  decided(e) {
    const waiting = this.waiting.get(e.request_id);
    this.waiting.delete(e.request_id);
    const a = this.approvals.get(e.request_id);
    if (!a) return waiting;
    const verdict = e.allowed ? e.remember ? `Always allowed${e.rule ? ` (${e.rule})` : ""}` : "Allowed" : "Denied";
    close(a, verdict);
    a.card.dataset.state = e.allowed ? "allowed" : "denied";
    return waiting;
  }
  /** The run ended: every card still open is closed, saying why. */
  closeOpen(text) {
    for (const cards of [this.questions, this.approvals]) {
      for (const card of cards.values()) {
        if (!card.card.dataset.state) close(card, text);
      }
    }
  }
};
function close(pending, text) {
  pending.buttons.forEach((b) => b.disabled = true);
  pending.card.classList.remove("ja-flash");
  if (!pending.card.dataset.state) pending.card.dataset.state = "closed";
  pending.answered.hidden = false;
  pending.answered.textContent = text;
}

// src/panel/plan.ts
var ACTIONS = {
  execute_plan: "▶ Executing the plan",
  compact: "⇣ Compacting the conversation"
};
function actionLine(action, prompt) {
  return h(
    "div",
    { class: "ja-line ja-action", "data-action": action },
    h("div", { class: "ja-action-label", text: ACTIONS[action] }),
    h(
      "details",
      { class: "ja-told" },
      h("summary", { text: "What the agent was told" }),
      renderMarkdown(prompt)
    )
  );
}
var PlanTracker = class {
  constructor(actions) {
    this.actions = actions;
    /** Called after every change of the newest plan (null: there is none). */
    this.onChange = null;
    this.state = null;
  }
  reset() {
    this.state = null;
    this.notify();
  }
  /** A new plan: its card (the older plan's button is disabled for good). */
  show(plan) {
    if (this.state) this.state.button.disabled = true;
    const state = {
      ...planCard(plan),
      plan,
      status: new Map(plan.steps.map((s) => [s.step_number, "pending"])),
      executed: false,
      runId: null,
      starting: false,
      cutShort: false
    };
    state.button.addEventListener("click", () => this.execute());
    this.state = state;
    this.refresh();
    return state.card;
  }
  /** Execute (or carry on with) the newest plan: the card's button and the strip's. */
  execute() {
    const state = this.state;
    if (!state || state.executed) return;
    state.executed = true;
    state.starting = true;
    this.refresh();
    this.actions.focusInput?.();
    this.actions.command("execute_plan").catch((error) => {
      state.executed = false;
      state.starting = false;
      this.refresh();
      this.actions.error(error.message);
    });
  }
  step(e) {
    const state = this.state;
    const step = state?.steps.get(e.step_number);
    if (!state || !step) return;
    this.mark(state, e.step_number, e.status);
    step.status.title = e.note || "";
    state.executed = true;
    if (e.run_id) state.runId = e.run_id;
    this.refresh();
  }
  /** A run started: the one the button asked for, if it was waiting for it. */
  runStarted(runId) {
    const state = this.state;
    if (!state?.starting) return;
    state.starting = false;
    state.runId = runId ?? null;
    this.refresh();
  }
  /** A run ended; `cutShort`: stopped or failed. */
  runEnded(e, cutShort) {
    const state = this.state;
    if (!state) return;
    state.starting = false;
    if (cutShort && state.executed && e.run_id && state.runId === e.run_id)
      this.stopped();
    else this.refresh();
  }
  /** The plan's execution was stopped or failed (live, or in a resumed session). */
  stopped() {
    const state = this.state;
    if (!state) return;
    state.executed = false;
    state.runId = null;
    state.cutShort = true;
    for (const [n, status] of state.status)
      if (status === "in_progress") this.mark(state, n, "stopped");
    this.refresh();
  }
  /** The buttons: enabled while the plan is not running and the agent idle. */
  refresh() {
    const state = this.state;
    if (state) {
      state.button.textContent = state.cutShort ? "Continue plan" : "Execute plan";
      state.button.disabled = state.executed || this.actions.busy();
    }
    this.notify();
  }
  progress() {
    const state = this.state;
    if (!state) return null;
    const steps = state.plan.steps.map((s) => ({
      number: s.step_number,
      action: s.action,
      status: state.status.get(s.step_number) ?? "pending"
    }));
    const finished = steps.every(
      (s) => s.status === "done" || s.status === "skipped"
    );
    const find = (status) => steps.find((s) => s.status === status);
    const busy = this.actions.busy();
    return {
      goal: state.plan.goal,
      steps,
      done: steps.filter((s) => s.status === "done").length,
      current: find("in_progress") ?? find("stopped") ?? find("pending") ?? null,
      finished,
      running: state.executed && !finished && (state.starting || busy),
      action: state.executed ? null : state.cutShort ? "Continue plan" : "Execute plan",
      disabled: busy
    };
  }
  mark(state, n, status) {
    const step = state.steps.get(n);
    if (!step) return;
    state.status.set(n, status);
    step.status.dataset.status = step.row.dataset.status = status;
    step.status.textContent = status === "stopped" ? "stopped" : STEP_LABELS[status] ?? status;
  }
  notify() {
    this.onChange?.(this.progress());
  }
};

// src/panel/trust.ts
var GROUPS = [
  ["mcp_server", "Programs and servers it would start or reach"],
  ["provider", "Where conversations would be sent"],
  ["models", "Models"],
  ["role", "Roles"],
  ["rule", "Rules"],
  ["default_rules", "Built-in rules"],
  ["cells", "Cells"],
  ["context", "Context window"]
];
function detailItem(d) {
  return h(
    "li",
    { class: "ja-trust-detail" },
    h("span", { class: "ja-trust-label", text: d.label }),
    d.name ? [" ", h("code", { text: d.name })] : null,
    d.value ? [": ", h("code", { text: d.value })] : null
  );
}
function effectItem(e) {
  const details = e.details || [];
  return h(
    "li",
    { class: "ja-trust-effect", "data-kind": e.kind },
    h("span", { class: "ja-trust-summary", text: e.summary }),
    details.length ? h(
      "details",
      { class: "ja-trust-more" },
      h("summary", { text: "As the settings file writes it" }),
      h("ul", { class: "ja-trust-details" }, details.map(detailItem))
    ) : null
  );
}
function effectList(effects) {
  const known = new Set(GROUPS.map(([kind]) => kind));
  const groups = [
    ...GROUPS,
    // A kind a newer kernel sends still shows, under a plain heading.
    ...[...new Set(effects.map((e) => e.kind))].filter((kind) => !known.has(kind)).map((kind) => [kind, "Other"])
  ];
  return h(
    "div",
    { class: "ja-trust-effects" },
    groups.flatMap(([kind, heading]) => {
      const mine = effects.filter((e) => e.kind === kind);
      if (!mine.length) return [];
      return [
        h("h4", { text: heading }),
        h("ul", { class: "ja-trust-list" }, mine.map(effectItem))
      ];
    })
  );
}
function trustCard(prompt, trust) {
  const effects = prompt.effects || [];
  const button = h("button", {
    type: "button",
    class: "ja-primary",
    text: "Trust this folder",
    title: "Apply everything listed here (remembered in ~/.jupyter_agent/trusted-folders.json)"
  });
  button.addEventListener("click", () => trust(button));
  return h(
    "section",
    {
      class: "ja-card ja-trust",
      "aria-label": "Trust this folder's settings?"
    },
    h(
      "div",
      { class: "ja-card-head" },
      h("h3", { text: "This folder's settings are not trusted" })
    ),
    h(
      "p",
      { class: "ja-trust-intro" },
      "Until you trust this folder, its settings (",
      h("code", { text: prompt.source }),
      `) apply only where they narrow what the agent may do. Trusting it would enable ${effects.length === 1 ? "this" : `these ${effects.length} things`}:`
    ),
    effectList(effects),
    h("div", { class: "ja-actions" }, button)
  );
}
function trustedLine(applied) {
  const effects = applied.effects || [];
  return h(
    "div",
    { class: "ja-line ja-trusted" },
    h("div", {
      text: effects.length ? "✔ Trusted this folder: its settings apply in full. Now:" : "✔ Trusted this folder: its settings apply (nothing was held back)."
    }),
    effects.length ? effectList(effects) : null
  );
}

// src/panel/text-block.ts
function textBlock(phase) {
  const el = h("div", { class: "ja-text", "aria-hidden": "true" });
  if (phase) el.append(h("div", { class: "ja-phase", text: phase }));
  const done = h("div");
  const tail = h("div");
  el.append(done, tail);
  return {
    el,
    done,
    tail,
    phase,
    text: "",
    doneLength: 0,
    scanned: 0,
    cut: 0,
    fence: null
  };
}
function finishText(block) {
  block.el.removeAttribute("aria-hidden");
  block.done.replaceChildren(renderMarkdown(block.text));
  block.tail.replaceChildren();
  block.doneLength = block.text.length;
}
function renderStreaming(block) {
  const text = block.text;
  let pos = block.scanned;
  for (; ; ) {
    const end = text.indexOf("\n", pos);
    if (end < 0) break;
    const line = text.slice(pos, end);
    const fence = FENCE.exec(line);
    if (fence) {
      if (block.fence === null) block.fence = fence[1][0];
      else if (line.trim()[0] === block.fence && line.trim().replace(/[`~]/g, "") === "")
        block.fence = null;
    } else if (block.fence === null && isBlank(line)) {
      block.cut = end + 1;
    }
    pos = end + 1;
  }
  block.scanned = pos;
  if (block.cut > block.doneLength) {
    block.done.append(renderMarkdown(text.slice(block.doneLength, block.cut)));
    block.doneLength = block.cut;
  }
  block.tail.replaceChildren(renderMarkdown(text.slice(block.doneLength)));
}

// src/panel/transcript.ts
var UnknownEntryError = class extends Error {
  constructor(entry) {
    super(
      `jupyter_agent panel: unknown transcript entry kind ${JSON.stringify(entry?.kind)}`
    );
    this.entry = entry;
  }
};
var Transcript = class _Transcript {
  /**
   * `strict`: an unknown entry kind throws (the tests) rather than being logged to the
   * console (a page talking to a newer kernel). `nested`: a subagent's transcript, inside
   * its parent's: the view's own controls (Execute plan, Retry) act on the agent the user
   * started, so a nested transcript does not offer them, and its parent's log announces it.
   */
  constructor(root, actions, strict = false, nested = false) {
    this.root = root;
    this.actions = actions;
    this.strict = strict;
    this.nested = nested;
    this.follow = true;
    this.lastN = 0;
    this.text = null;
    this.thinking = null;
    this.tools = /* @__PURE__ */ new Map();
    /** Subagents by session id: each a transcript of its own inside its tool card. */
    this.subagents = /* @__PURE__ */ new Map();
    this.dirty = /* @__PURE__ */ new Set();
    this.frame = 0;
    this.plan = new PlanTracker(actions);
    this.pending = new PendingCards(actions, () => this.focusNext());
    if (nested) {
      this.reset();
      return;
    }
    root.setAttribute("role", "log");
    root.setAttribute("aria-live", "polite");
    root.setAttribute("aria-relevant", "additions");
    root.addEventListener("scroll", () => this.follow = this.atBottom(), {
      passive: true
    });
    if (typeof MutationObserver === "function") {
      new MutationObserver(() => this.follow && this.scrollDown()).observe(
        root,
        {
          childList: true,
          subtree: true,
          characterData: true,
          attributes: true,
          attributeFilter: ["open", "hidden"]
        }
      );
    }
    this.reset();
  }
  reset() {
    this.root.replaceChildren();
    this.follow = true;
    this.lastN = 0;
    this.text = null;
    this.thinking = null;
    this.tools = /* @__PURE__ */ new Map();
    this.pending = new PendingCards(this.actions, () => this.focusNext());
    this.subagents = /* @__PURE__ */ new Map();
    this.plan.reset();
    this.dirty = /* @__PURE__ */ new Set();
    this.frame = 0;
  }
  apply(entry) {
    if (entry.n !== void 0) {
      if (entry.n <= this.lastN) return;
      this.lastN = entry.n;
    }
    switch (entry.kind) {
      case "user":
        return this.onUser(entry);
      case "note":
        return void this.line("note", entry.text);
      case "agent_start":
        return this.onAgentStart(entry);
      case "turn_start":
        return this.closeStreams();
      case "text_delta":
        return this.onTextDelta(entry);
      case "text":
      case "text_end":
        return this.onText(entry);
      case "thinking_delta":
        return this.onThinkingDelta(entry);
      case "reason":
      case "observe":
        if (entry.control)
          this.line("meta", `${entry.kind}: ${pretty(entry.control)}`);
        return;
      case "retry":
        return this.onRetry(entry);
      case "tool_start":
        return void this.onToolStart(entry);
      case "tool_progress":
        return this.onToolProgress(entry);
      case "tool_end":
        return this.onToolEnd(entry);
      case "plan":
        return this.onPlan(entry);
      case "plan_step":
        return this.plan.step(entry);
      case "plan_stopped":
        return this.plan.stopped();
      case "question":
        return this.onQuestion(entry);
      case "answer":
        return this.pending.answer(entry);
      case "request_input_timeout":
        return this.pending.timeout(entry);
      case "permission_request":
        return this.onPermissionRequest(entry);
      case "permission_response":
        return this.onPermissionResponse(entry);
      case "update":
        this.closeStreams();
        return void this.line("update", `ℹ ${entry.message}`);
      case "warning":
        return this.onWarning(entry);
      case "trusted":
        this.closeStreams();
        return void this.add(trustedLine(entry.applied));
      case "compaction":
        this.closeStreams();
        return void this.add(compactionMarker(entry));
      case "stopped":
        return this.onStopped(entry);
      case "completed":
        return this.onCompleted(entry);
      case "error":
        return this.onError(entry);
      case "subagent_spawned":
        return void this.onSubagentSpawned(entry);
      case "subagent_output":
        return this.onSubagentOutput(entry);
      case "subagent_complete":
        return this.onSubagentComplete(entry);
      default:
        return this.unknown(entry);
    }
  }
  unknown(entry) {
    const error = new UnknownEntryError(entry);
    if (this.strict) throw error;
    console.error(error.message, entry);
  }
  add(node) {
    this.root.append(node);
    if (this.follow) this.scrollDown();
    return node;
  }
  atBottom() {
    const r = this.root;
    return r.scrollHeight - r.scrollTop - r.clientHeight < 40;
  }
  scrollDown() {
    this.root.scrollTop = this.root.scrollHeight;
  }
  line(kind, text) {
    return this.add(h("div", { class: `ja-line ja-${kind}` }, text));
  }
  closeStreams() {
    if (this.text) this.finishText(this.text);
    this.text = null;
    this.thinking = null;
  }
  // Runs and messages
  onUser(e) {
    this.closeStreams();
    if (e.action) return void this.add(actionLine(e.action, e.text));
    const bubble = h("div", { class: "ja-user" });
    const text = String(e.text ?? "");
    const split = text.search(/\n\s*\n/);
    if (split > 0 && text.length > 240) {
      bubble.append(renderMarkdown(text.slice(0, split)));
      bubble.append(
        h(
          "details",
          {},
          h("summary", { text: "More" }),
          renderMarkdown(text.slice(split))
        )
      );
    } else {
      bubble.append(renderMarkdown(text));
    }
    this.add(bubble);
  }
  onAgentStart(e) {
    this.closeStreams();
    this.plan.runStarted(e.run_id);
    this.onUser({ text: e.task, action: e.action ?? void 0 });
    const label = e.model_label ? ` — ${e.model_label}` : "";
    this.line("run", `${e.role} · ${e.model}${label}`);
  }
  onTextDelta(e) {
    const phase = e.phase ?? null;
    if (this.text === null || this.text.phase !== phase) {
      this.closeStreams();
      this.text = this.textBlock(phase);
    }
    this.text.text += e.text;
    this.dirty.add(this.text);
    this.schedule();
  }
  /** A text block ended: `text` carries its whole text, `text_end` keeps what streamed. */
  onText(e) {
    const phase = e.phase ?? null;
    let block = this.text;
    if (block === null || block.phase !== phase) {
      this.closeStreams();
      block = this.textBlock(phase);
    }
    if (e.kind === "text") block.text = e.text;
    this.finishText(block);
    if (e.interrupted)
      block.el.append(
        h("span", { class: "ja-interrupted", text: " [interrupted]" })
      );
    this.text = null;
  }
  textBlock(phase) {
    const block = textBlock(phase);
    this.add(block.el);
    return block;
  }
  finishText(block) {
    this.dirty.delete(block);
    finishText(block);
  }
  schedule() {
    if (this.frame) return;
    const run = () => {
      this.frame = 0;
      this.renderDirty();
    };
    this.frame = typeof requestAnimationFrame === "function" && document.visibilityState !== "hidden" ? requestAnimationFrame(run) : setTimeout(run, 16);
  }
  /** Renders the streamed text that arrived since the last frame. */
  renderDirty() {
    for (const block of this.dirty) renderStreaming(block);
    this.dirty.clear();
    if (this.follow) this.scrollDown();
  }
  onThinkingDelta(e) {
    if (this.thinking === null) {
      const pre = h("div", { class: "ja-thinking-text" });
      const box = h(
        "details",
        { class: "ja-thinking" },
        h("summary", { text: "Thinking" }),
        pre
      );
      this.add(box);
      this.thinking = { pre };
    }
    this.thinking.pre.append(document.createTextNode(e.text));
  }
  onRetry(e) {
    if (this.text) this.text.el.remove();
    this.text = null;
    this.thinking = null;
    this.line("warning", `↻ The reply broke off (${e.reason}); retrying.`);
  }
  // Tools
  onToolStart(e) {
    this.closeStreams();
    const tool = toolCard(e);
    this.tools.set(e.tool_use_id, tool);
    this.add(tool.card);
    return tool;
  }
  onToolProgress(e) {
    const tool = this.tools.get(e.tool_use_id);
    if (!tool || showLastLine(tool, e.output)) return;
    tool.output.hidden = false;
    tool.output.append(document.createTextNode(e.output));
    const text = tool.output.textContent ?? "";
    if (text.length > 2 * MAX_PRE)
      tool.output.textContent = `…${text.slice(-MAX_PRE)}`;
  }
  onToolEnd(e) {
    const tool = this.tools.get(e.tool_use_id) ?? this.onToolStart({
      tool_use_id: e.tool_use_id,
      name: e.name,
      input: {},
      summary: e.name
    });
    endTool(tool, e);
  }
  onPlan(e) {
    this.closeStreams();
    const card = this.add(this.plan.show(e.plan));
    if (this.nested)
      for (const b of card.querySelectorAll("button")) b.remove();
  }
  // Subagents
  /** A subagent's box, in the card of the call that started it (else in the log). */
  onSubagentSpawned(e) {
    this.closeStreams();
    const sub = subagentBox(e);
    const tool = e.parent_tool_use_id ? this.tools.get(e.parent_tool_use_id) : void 0;
    if (tool) {
      tool.result.before(sub.box);
      tool.card.open = true;
    } else {
      this.add(sub.box);
    }
    const transcript = new _Transcript(
      sub.body,
      this.actions,
      this.strict,
      true
    );
    const entry = { ...sub, transcript };
    this.subagents.set(e.child_session_id, entry);
    return entry;
  }
  onSubagentOutput(e) {
    const inner = e.event;
    if (inner.kind === "state" || inner.kind === "usage" || inner.kind === "context")
      return;
    const sub = this.subagents.get(e.child_session_id) ?? this.onSubagentSpawned({
      kind: "subagent_spawned",
      child_session_id: e.child_session_id,
      agent_type: "subagent"
    });
    sub.transcript.apply(inner);
    if (inner.kind === "permission_request" || inner.kind === "question")
      sub.box.open = true;
  }
  onSubagentComplete(e) {
    const sub = this.subagents.get(e.child_session_id);
    if (sub) endSubagent(sub, e);
  }
  /** The plan's buttons: enabled while the plan is not running and the agent idle. */
  refreshControls() {
    this.plan.refresh();
  }
  // Questions and approvals
  onQuestion(e) {
    this.closeStreams();
    const card = this.add(this.pending.question(e));
    card.scrollIntoView?.({ block: "nearest" });
    card.querySelector("button, input")?.focus?.({ preventScroll: true });
  }
  onPermissionRequest(e) {
    this.closeStreams();
    const card = this.add(this.pending.approval(e));
    card.scrollIntoView?.({ block: "nearest" });
    const tool = this.tools.get(e.tool_use_id);
    if (tool) waitForUser(tool, true);
  }
  onPermissionResponse(e) {
    const waiting = this.pending.decided(e);
    const tool = waiting !== void 0 ? this.tools.get(waiting) : void 0;
    if (tool && tool.card.dataset.state === "waiting") waitForUser(tool, false);
  }
  /** After an action disabled the control that had focus: focus goes on (types.ts). */
  focusNext() {
    if (this.actions.focusInput) this.actions.focusInput();
    else this.root.focus?.({ preventScroll: true });
  }
  // Progress and endings
  onWarning(e) {
    if (e.action !== "trust_workspace")
      return void this.line("warning", `⚠ ${e.message}`);
    const [first, ...rest] = e.message.split("\n");
    const line = this.line("warning", `⚠ ${first}`);
    if (rest.length)
      line.append(
        h(
          "details",
          { class: "ja-trust-more" },
          h("summary", { text: "What trusting would apply" }),
          h("pre", { class: "ja-pre", text: rest.join("\n") })
        )
      );
    const trust = h("button", {
      type: "button",
      text: "Trust this folder",
      title: "Apply this folder's settings (remembered in your own settings)"
    });
    trust.addEventListener("click", () => {
      trust.disabled = true;
      this.focusNext();
      this.actions.command("trust").then(
        () => trust.textContent = "Trusted",
        (error) => {
          trust.disabled = false;
          this.actions.error(error.message);
        }
      );
    });
    line.append(" ", trust);
  }
  onStopped(e) {
    this.closeStreams();
    this.pending.closeOpen("Not answered: the run stopped.");
    for (const tool of this.tools.values())
      if (tool.card.dataset.state === "running")
        tool.card.dataset.state = "error";
    const line = this.line(
      "stopped",
      `■ Stopped (${e.reason.replace(/_/g, " ")})${e.message ? `: ${e.message}` : ""}`
    );
    if (e.reason === "error" && !this.nested)
      line.append(" ", this.retryButton());
    this.plan.runEnded(e, true);
  }
  onCompleted(e) {
    this.closeStreams();
    this.pending.closeOpen("Not answered: the run ended.");
    const goal = e.plan_ready ? this.plan.progress()?.goal : void 0;
    const line = e.plan_ready ? h(
      "div",
      { class: "ja-line ja-completed ja-plan-ready" },
      "✔ Plan ready for review"
    ) : h("div", { class: "ja-line ja-completed" }, "✔ Completed");
    const summary = e.plan_ready ? goal : e.summary;
    if (summary) {
      line.append(": ");
      renderInline(summary, line);
    }
    this.add(line);
    this.plan.runEnded(e, false);
  }
  onError(e) {
    this.closeStreams();
    this.pending.closeOpen("Not answered: the run failed.");
    const line = this.line("error", `✗ ${e.message}`);
    line.dataset.errorType = e.error_type || "";
    if (!this.nested) line.append(" ", this.retryButton());
    this.plan.runEnded(e, true);
  }
  /** Retry: the last message sent again (the kernel says when there is none). */
  retryButton() {
    const button = h("button", {
      type: "button",
      class: "ja-retry",
      text: "Retry",
      title: "Send the last message again"
    });
    button.addEventListener("click", () => {
      button.disabled = true;
      this.focusNext();
      this.actions.command("retry").catch((error) => {
        button.disabled = false;
        this.actions.error(error.message);
      });
    });
    return button;
  }
};

// src/panel/widget.ts
function render({ model, el }) {
  const viewId = Math.random().toString(36).slice(2, 10);
  const listeners = [];
  let disposed = false;
  const on = (name, fn) => {
    model.on(name, fn);
    listeners.push([name, fn]);
  };
  const status = h("span", {
    class: "ja-status",
    role: "status",
    "aria-live": "polite"
  });
  const roleBadge = h("span", { class: "ja-badge ja-role-badge" });
  const modelName = h("span", { class: "ja-model" });
  const replay = h("span", { class: "ja-replay", hidden: true });
  const modelNotes = h("div", {
    class: "ja-note ja-model-notes",
    hidden: true
  });
  const sandbox = h("span", { class: "ja-sandbox", hidden: true });
  const notebook = h("div", { class: "ja-notebook", hidden: true });
  const dockNote = h("div", { class: "ja-note", hidden: true });
  const errors = h("div", { class: "ja-errors", "aria-live": "assertive" });
  const transcriptEl = h("div", {
    class: "ja-transcript",
    tabindex: "0",
    "aria-label": "Transcript"
  });
  const waiting = h("div", {
    class: "ja-line ja-meta",
    text: "Connecting to the kernel…"
  });
  transcriptEl.append(waiting);
  const message = h("textarea", {
    class: "ja-message",
    rows: 2,
    "aria-label": "Message",
    placeholder: "Ask the agent… (Enter sends, Shift+Enter starts a new line)"
  });
  const sendButton = h("button", {
    type: "submit",
    class: "ja-primary",
    text: "Send"
  });
  const stopButton = h("button", {
    type: "button",
    class: "ja-danger ja-stop",
    text: "Stop"
  });
  const inputForm = h(
    "form",
    { class: "ja-input" },
    message,
    h("div", { class: "ja-buttons" }, sendButton, stopButton)
  );
  const roleSelect = h("select", { "aria-label": "Role" });
  const modelPicker = new ModelPicker(
    (wanted) => command("set_model", { model: wanted }).catch((error) => {
      showError(error.message);
      throw error;
    })
  );
  const maxSteps = h("input", {
    type: "number",
    min: 1,
    step: 1,
    class: "ja-max-steps",
    "aria-label": "Max iterations"
  });
  const sessionSelect = h("select", { "aria-label": "Session" });
  const resumeButton = h("button", { type: "button", text: "Resume" });
  const controls = h(
    "div",
    { class: "ja-controls" },
    h("label", {}, "Role ", roleSelect),
    modelPicker.el,
    h("label", {}, "Max iterations ", maxSteps),
    h("label", { class: "ja-session-picker" }, "Session ", sessionSelect),
    resumeButton
  );
  const sessionSearch = new SessionSearch({
    search: (query) => command("search_sessions", { query }).then(
      (reply) => reply.found ?? []
    ),
    resume: (sessionId) => resume(sessionId, () => sessionSearch.input.value = ""),
    busy: () => model.get("busy")
  });
  const usage = h("div", { class: "ja-usage" });
  const gauge = new ContextGauge(() => {
    focusInput();
    command("compact").catch((error) => {
      showError(error.message);
      refreshContext();
    });
  });
  const setup = new SetupBox(
    (key, save) => command("set_key", { key, save }),
    (text) => showError(text)
  );
  const trustBox = h("div", { class: "ja-trust-box", hidden: true });
  const root = h(
    "div",
    { class: "ja-panel" },
    h(
      "div",
      { class: "ja-header" },
      h("span", { class: "ja-title", text: "jupyter_agent" }),
      roleBadge,
      modelName,
      replay,
      sandbox,
      status
    ),
    notebook,
    modelNotes,
    dockNote,
    setup.el,
    trustBox,
    transcriptEl,
    errors,
    inputForm,
    controls,
    gauge.el,
    sessionSearch.el,
    usage
  );
  el.append(root);
  root.addEventListener(REVEAL_CELL_EVENT, (event) => {
    const detail = event.detail;
    if (detail && !detail.kernelId) detail.kernelId = model.get("kernel_id");
  });
  const replies = new Replies(viewId, (message2) => model.send(message2));
  errors.before(replies.waitNote);
  const command = (name, args) => replies.command(name, args);
  const showError = (text) => {
    const line = h("div", { class: "ja-line ja-error", text });
    errors.replaceChildren(line);
    setTimeout(() => line.remove(), 8e3);
  };
  const focusInput = () => message.focus();
  const transcript = new Transcript(transcriptEl, {
    command,
    busy: () => model.get("busy"),
    error: showError,
    focusInput
  });
  const strip = new PlanStrip(() => transcript.plan.execute());
  transcriptEl.before(strip.el);
  transcript.plan.onChange = (progress) => strip.update(progress);
  let ready = false;
  on("msg:custom", (msg) => {
    if (!msg || typeof msg !== "object") return;
    switch (msg.type) {
      case "reply":
        if (!replies.settle(msg) && msg.id === null && !msg.ok)
          showError(msg.error || "The kernel refused a message.");
        return;
      case "snapshot":
        if (msg.view !== null && msg.view !== viewId) return;
        transcriptEl.setAttribute("aria-live", "off");
        setTimeout(() => transcriptEl.setAttribute("aria-live", "polite"), 500);
        transcript.reset();
        for (const entry of msg.entries) transcript.apply(entry);
        transcript.renderDirty();
        transcript.scrollDown();
        ready = true;
        refresh();
        return;
      case "events":
        if (ready) for (const entry of msg.entries) transcript.apply(entry);
        return;
      case "text":
        if (ready)
          transcript.apply({ kind: "text_delta", n: msg.n, text: msg.text });
        return;
      default: {
        const unknown = msg;
        console.error("jupyter_agent panel: unknown kernel message", unknown);
      }
    }
  });
  function refresh() {
    const busy = model.get("busy");
    status.textContent = statusText(model);
    status.dataset.state = model.get("status");
    roleBadge.textContent = model.get("role");
    modelName.textContent = model.get("model_name");
    const label = model.get("model_label");
    replay.hidden = !label;
    replay.textContent = label || "";
    const confinement = model.get("sandbox") || "";
    sandbox.hidden = !confinement;
    sandbox.textContent = confinement;
    sandbox.title = model.get("sandbox_detail") || "";
    sandbox.dataset.active = model.get("sandboxed") ? "true" : "false";
    stopButton.disabled = !busy;
    sendButton.disabled = busy;
    sendButton.title = busy ? "The agent is working: wait, or Stop it first" : "";
    roleSelect.disabled = busy;
    modelPicker.setBusy(busy);
    const notes = model.get("model_notes") || "";
    modelNotes.hidden = !notes;
    modelNotes.textContent = notes;
    resumeButton.disabled = busy || !sessionSelect.value || sessionSelect.value === model.get("session_id");
    root.dataset.busy = busy ? "true" : "false";
    refreshContext();
    const needsSetup = model.get("model_ready") === false;
    setup.show(needsSetup ? model.get("model_setup") || "" : null);
    if (needsSetup && !busy) {
      status.textContent = "set-up needed";
      status.dataset.state = "setup";
    }
    transcript.refreshControls();
    sessionSearch.refresh();
  }
  function refreshTrust() {
    const prompt = model.get("trust") ?? null;
    trustBox.hidden = prompt === null;
    trustBox.replaceChildren(
      ...prompt === null ? [] : [trustCard(prompt, trustFolder)]
    );
  }
  function trustFolder(button) {
    button.disabled = true;
    focusInput();
    command("trust").catch((error) => {
      button.disabled = false;
      showError(error.message);
    });
  }
  function refreshContext() {
    gauge.update(model.get("context"), model.get("busy"));
  }
  function refreshRoles() {
    const current = model.get("role");
    roleSelect.replaceChildren(
      ...(model.get("roles") || []).map((role) => {
        const label = role.name.charAt(0).toUpperCase() + role.name.slice(1);
        const option = h("option", {
          value: role.name,
          title: role.description || void 0,
          text: label
        });
        option.selected = role.name === current;
        return option;
      })
    );
    roleSelect.value = current;
  }
  function refreshSessions() {
    const current = model.get("session_id");
    const sessions = model.get("sessions") || [];
    const options = sessions.map((s) => {
      const when = new Date(s.updated * 1e3).toLocaleString();
      const option = h("option", {
        value: s.id,
        text: `${s.title} — ${when}${s.id === current ? " (current)" : ""}`
      });
      option.selected = s.id === current;
      return option;
    });
    if (!sessions.some((s) => s.id === current))
      options.unshift(
        h("option", {
          value: current,
          text: "(current session)",
          selected: true
        })
      );
    sessionSelect.replaceChildren(...options);
    refresh();
  }
  function refreshNotebook() {
    const mode = model.get("bridge_mode");
    const text = model.get("notebook");
    notebook.hidden = !text;
    notebook.dataset.mode = mode;
    notebook.textContent = mode === "file" ? `Notebook edits go to the file: ${text}` : mode === "live" ? `Notebook: ${text}` : text;
  }
  function refreshDock() {
    const side = model.get("dock") === "side";
    dockNote.hidden = true;
    if (!side) return;
    if (!el.isConnected) {
      requestAnimationFrame(() => {
        if (!disposed) refreshDock();
      });
      return;
    }
    if (el.closest("[data-jupyter-agent-side]")) return;
    const event = new CustomEvent("jupyter-agent:dock", {
      detail: {
        where: "side",
        kernelId: model.get("kernel_id"),
        widgetId: model.get("widget_id")
      },
      cancelable: true
    });
    const taken = !document.dispatchEvent(event);
    dockNote.hidden = false;
    dockNote.textContent = taken ? "The agent panel is in the right sidebar." : "Docking in the sidebar needs the jupyter_agent JupyterLab extension; the panel stays here.";
    root.classList.toggle("ja-docked-away", taken);
  }
  for (const name of [
    "status",
    "detail",
    "stop_reason",
    "busy",
    "role",
    "model_name",
    "model_label",
    "sandbox",
    "sandboxed",
    "plan_ready",
    "model_ready",
    "model_setup",
    "model_notes"
  ])
    on(`change:${name}`, refresh);
  on("change:models", () => modelPicker.show(model.get("models")));
  on("change:roles", refreshRoles);
  on("change:role", refreshRoles);
  on("change:sessions", refreshSessions);
  on("change:session_id", refreshSessions);
  on("change:notebook", refreshNotebook);
  on("change:bridge_mode", refreshNotebook);
  on("change:usage", () => usage.textContent = usageText(model.get("usage")));
  on("change:context", refreshContext);
  on(
    "change:max_steps",
    () => maxSteps.value = String(model.get("max_steps"))
  );
  on("change:dock", refreshDock);
  on("change:trust", refreshTrust);
  inputForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = message.value.trim();
    if (!text) {
      showError("Type a message first.");
      message.focus();
      return;
    }
    if (model.get("busy")) return;
    sendButton.disabled = true;
    focusInput();
    command("send", { text, role: roleSelect.value }).then(
      () => {
        message.value = "";
      },
      (error) => {
        showError(error.message);
        refresh();
      }
    );
  });
  message.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      inputForm.requestSubmit();
    }
  });
  const stop = () => {
    stopButton.disabled = true;
    focusInput();
    if (model.get("running_code")) void interruptKernel(model.get("kernel_id"));
    command("stop").catch((error) => showError(error.message));
  };
  stopButton.addEventListener("click", stop);
  root.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || event.defaultPrevented || event.isComposing || !model.get("busy") || stopButton.disabled)
      return;
    event.preventDefault();
    event.stopPropagation();
    stop();
  });
  roleSelect.addEventListener("change", () => {
    command("set_role", { role: roleSelect.value }).catch((error) => {
      showError(error.message);
      refreshRoles();
    });
  });
  maxSteps.addEventListener("change", () => {
    const value = parseInt(maxSteps.value, 10);
    command("set_max_steps", { value }).catch((error) => {
      showError(error.message);
      maxSteps.value = String(model.get("max_steps"));
    });
  });
  sessionSelect.addEventListener("change", refresh);
  function resume(sessionId, done) {
    resumeButton.disabled = true;
    focusInput();
    command("resume", { session_id: sessionId }).then(done, (error) => {
      showError(error.message);
      refresh();
    });
  }
  resumeButton.addEventListener("click", () => resume(sessionSelect.value));
  refreshRoles();
  modelPicker.show(model.get("models"));
  refreshSessions();
  refreshNotebook();
  refreshDock();
  refreshTrust();
  usage.textContent = usageText(model.get("usage"));
  maxSteps.value = String(model.get("max_steps"));
  refresh();
  model.send({ type: "hello", view: viewId });
  return () => {
    disposed = true;
    sessionSearch.dispose();
    for (const [name, fn] of listeners) model.off(name, fn);
    replies.dispose();
  };
}
var widget_default = { render };
export {
  widget_default as default,
  interruptKernel,
  renderInline,
  renderMarkdown
};
