/**
 * The extension's version, read from its package.json by the bundler (rspack
 * resolves the require at build time; `tsc` leaves it alone). package.json's
 * version is kept equal to the Python package's.
 */
declare const require: (id: string) => { version: string };

export const VERSION: string = require('../package.json').version;
