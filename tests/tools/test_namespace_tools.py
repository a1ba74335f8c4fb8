"""Namespace tools on plain dict namespaces (real numpy and pandas): summaries, no user code
runs, secrets masked, clear errors."""

from __future__ import annotations

import collections
import datetime
import os
from typing import ClassVar

import pytest
from helpers import call
from inline_snapshot import snapshot

from jupyter_agent import Agent, ScriptedModel
from jupyter_agent.errors import ToolError
from jupyter_agent.namespace.kernel_namespace import KernelNamespace, safe_repr
from jupyter_agent.permissions import Permission
from jupyter_agent.tools import ToolContext
from jupyter_agent.tools.variables import NAMESPACE_TOOLS, inspect_variable, list_variables

np = pytest.importorskip("numpy")
pd = pytest.importorskip("pandas")

OPENAI = "sk-proj-abcdefghijklmnopqrstuvwx"
GITHUB = "ghp_abcdefghijklmnopqrstuvwxyz0123"


def clean(frame, *, drop=True):
    """Drop duplicate rows."""
    return frame


class Model:
    def __init__(self):
        self.weights = [0.5, 1.5]
        self.api_key = "abcd1234567890"

    def __repr__(self):
        return "Model(weights=[0.5, 1.5])"

    def predict(self, rows):
        return rows


def ctx_with(ns):
    ctx = ToolContext()
    ctx.resources.insert(KernelNamespace(ns, hidden={"exit": exit}))
    return ctx


def run(tool, ns, **args):
    import asyncio

    return asyncio.run(tool.call(ctx_with(ns), args))


@pytest.fixture
def ns():
    return {
        "df": pd.DataFrame(
            {
                "region": ["north", "south", "east", "west", "north", "east"],
                "sales": [1.5, None, 3.0, 4.0, 5.0, 6.5],
                "units": [1, 2, 3, 4, 5, 6],
                "api_token": ["t1", "t2", "t3", "t4", "t5", "t6"],
            }
        ),
        "arr": np.arange(12, dtype=float).reshape(3, 4),
        "OPENAI_API_KEY": OPENAI,
        "token": GITHUB,
        "note": f"my key is {OPENAI}, keep it",
        "config": {"db": {"host": "db.local", "password": "hunter2"}, "api_key": "k", "n": 3},
        "rows": [{"id": i} for i in range(50)],
        "n": 42,
        "when": datetime.date(2024, 1, 2),
        "model": Model(),
        "clean": clean,
        "os": os,
        "Model": Model,
        "_hidden": 1,
        "_i3": "x = 1",
        "In": ["", "x = 1"],
        "Out": {},
        "exit": exit,
    }


def test_list_hides_code_and_private_names_and_summarises_data(ns):
    out = run(list_variables, ns)
    text = out.text
    lines = text.splitlines()
    assert lines[0] == "10 variables:"
    names = [line.split()[0] for line in lines[2:12]]
    assert names == sorted(names, key=str.lower)
    assert "name" in lines[1] and "type" in lines[1] and "memory" in lines[1]
    row = {line.split()[0]: line for line in lines[2:12]}
    assert "pandas.DataFrame" in row["df"] and "6×4" in row["df"]
    assert "columns: region, sales, units, api_token" in row["df"]
    assert "numpy.ndarray" in row["arr"] and "(3, 4)" in row["arr"] and "96 B" in row["arr"]
    assert "int" in row["n"] and row["n"].endswith("42")
    assert "len 50" in row["rows"]
    # hidden: modules, functions, classes; private and IPython names
    assert "Not listed (1 module: os; 1 function: clean; 1 class: Model)" in text
    assert "include_modules=true lists them" in text
    assert "5 private or IPython names" in text
    for hidden in ("_hidden", "_i3", "In", "Out", "exit"):
        assert hidden not in names
    assert out.data["variables"] == names


def test_list_options_include_code_and_private_names(ns):
    text = run(list_variables, ns, include_private=True, include_modules=True).text
    for name in ("os", "clean", "Model", "_hidden", "_i3", "In", "Out", "exit"):
        assert any(line.split()[0] == name for line in text.splitlines()[2:]), name
    assert "clean(frame, *, drop=True)" in text
    assert "Not listed" not in text


def test_a_user_variable_named_like_an_ipython_one_is_listed():
    text = run(list_variables, {"exit": 3, "quit_rate": 0.1}).text
    # IPython's own exit is hidden only while it is IPython's object (hidden mapping)
    assert "quit_rate" in text
    assert "exit" not in text.splitlines()[0]


def test_listing_is_capped_with_a_note():
    namespace = KernelNamespace({f"v{i:03}": i for i in range(250)})
    text = namespace.list_text(limit=200)
    assert text.startswith("250 variables (showing the first 200 by name):")
    assert "v199" in text and "v200" not in text
    assert "… 50 more not shown; inspect_variable shows any one." in text


def test_memory_uses_library_sizes_not_deep_traversal():
    big = list(range(100_000))
    namespace = KernelNamespace(
        {"big": big, "frame": pd.DataFrame({"a": np.zeros(1000)}), "a": np.zeros(1000)}
    )
    shown = {v.name: v for v in namespace.variables()[0]}
    assert shown["a"].nbytes == 8000
    assert shown["frame"].nbytes == pd.DataFrame({"a": np.zeros(1000)}).memory_usage().sum()
    import sys

    assert shown["big"].nbytes == sys.getsizeof(big)  # shallow: the list, not its ints


def test_inspect_dataframe(ns):
    text = run(inspect_variable, ns, name="df").text
    assert text.startswith("df: pandas.DataFrame, 6 rows × 4 columns, ~")
    assert "  sales (float64, 1 null)" in text
    assert "  units (int64, 0 null)" in text
    assert "Head (5 rows):" in text and "north" in text and "west" in text
    assert "describe() of numeric columns:" in text
    assert "mean   4.000000  3.500000" in text
    # a column named like a secret is masked in the head, and left out of describe
    assert "t1" not in text and "•••" in text
    assert "(values of api_token masked: the names say secret)" in text


def test_inspect_dataframe_skips_costly_statistics(ns, monkeypatch):
    import jupyter_agent.namespace._tables as namespace

    monkeypatch.setattr(namespace, "STATS_CELL_LIMIT", 10)
    text = run(inspect_variable, ns, name="df").text
    assert "describe() skipped: 24 cells is more than the quick limit." in text
    assert "(null counts skipped: 24 cells)" in text


def test_inspect_series_and_array(ns):
    ns["s"] = pd.Series([3, 1, 2], name="score")
    text = run(inspect_variable, ns, name="s").text
    assert text.startswith("s: pandas.Series, 3 values, dtype int64, name 'score'")
    assert "Nulls: 0" in text and "describe():" in text
    text = run(inspect_variable, ns, name="arr").text
    assert text.startswith("arr: numpy.ndarray, shape (3, 4), dtype float64, 12 elements, ~96 B")
    assert "min 0.0, max 11.0, mean 5.5" in text
    assert "[[ 0.  1.  2.  3.]" in text
    ns["nan"] = np.array([1.0, np.nan, 3.0])
    assert "NaN: 1" in run(inspect_variable, ns, name="nan").text


def test_inspect_containers_strings_scalars_and_objects(ns):
    text = run(inspect_variable, ns, name="rows").text
    assert text.startswith("rows: list, 50 items, ~")
    assert "Item types: dict ×50" in text and "[0] {'id': 0}" in text and "… 30 more" in text
    assert run(inspect_variable, ns, name="n").text == "n: int = 42"
    text = run(inspect_variable, ns, name="model").text
    assert "Model(weights" not in text  # its own repr is its code: not run
    assert "weights: list [0.5, 1.5]" in text and "methods: predict" in text
    assert "api_key: 'abcd•••'  (masked" in text and "abcd1234567890" not in text
    text = run(inspect_variable, ns, name="clean").text
    assert "signature: clean(frame, *, drop=True)" in text and "doc: Drop duplicate rows." in text
    assert "def clean(frame" in text  # source of a user function
    ns["long"] = "x" * 2000
    assert "2,000 characters, 1 line" in run(inspect_variable, ns, name="long").text
    assert "1,500 more characters" in run(inspect_variable, ns, name="long").text


def test_item_access_into_dicts_lists_and_tuples(ns):
    assert "db.local" in run(inspect_variable, ns, name='config["db"]').text
    assert run(inspect_variable, ns, name="rows[3]").text.startswith("rows[3]: dict, 1 keys")
    with pytest.raises(
        ToolError, match=r"config has no key 'nope'\. Its keys: 'db', 'api_key', 'n'"
    ):
        run(inspect_variable, ns, name="config['nope']")
    with pytest.raises(ToolError, match="rows has 50 items; index 99 is out of range"):
        run(inspect_variable, ns, name="rows[99]")
    with pytest.raises(ToolError, match=r"attributes such as df\.columns are not followed"):
        run(inspect_variable, ns, name="df.columns")
    with pytest.raises(ToolError, match="only builtin dicts"):
        run(inspect_variable, ns, name="df['sales']")
    dd: collections.defaultdict[str, list[int]] = collections.defaultdict(list)
    with pytest.raises(ToolError, match="It is empty"):
        run(inspect_variable, {"dd": dd}, name="dd['x']")
    assert dict(dd) == {}  # a defaultdict lookup did not insert the key


def test_unknown_names_suggest_close_matches(ns):
    with pytest.raises(ToolError, match=r"There is no variable named 'dff'\. Close matches: df\."):
        run(inspect_variable, ns, name="dff")
    with pytest.raises(ToolError, match="list_variables shows the variables"):
        run(inspect_variable, ns, name="zzzzzz")


def test_no_namespace_means_no_kernel():
    import asyncio

    for tool, args in ((list_variables, {}), (inspect_variable, {"name": "x"})):
        with pytest.raises(ToolError) as info:
            asyncio.run(tool.call(ToolContext(), args))
        assert str(info.value) == snapshot(
            "This agent is not running in a kernel: there are no variables to inspect."
        )


# --- secrets ---------------------------------------------------------------------------------


def test_secret_names_are_masked_in_the_listing_and_inspection(ns):
    text = run(list_variables, ns).text
    for secret in (OPENAI, GITHUB, "hunter2", "t1"):
        assert secret not in text
    row = next(line for line in text.splitlines() if line.startswith("OPENAI_API_KEY"))
    assert "'sk-p•••'  (masked: the name says it is a secret)" in row
    assert "len" not in row
    assert "'password': '•••'" in text  # a secret-named key of a dict
    assert "my key is sk-p•••, keep it" in text  # a credential inside a value

    text = run(inspect_variable, ns, name="OPENAI_API_KEY").text
    assert text.startswith("OPENAI_API_KEY: str = 'sk-p•••'\nThe value is masked")
    assert GITHUB not in run(inspect_variable, ns, name="token").text
    assert OPENAI not in run(inspect_variable, ns, name="note").text
    text = run(inspect_variable, ns, name='config["db"]["password"]').text
    assert text.startswith("config['db']['password']: str = '•••'")
    text = run(inspect_variable, ns, name="config").text
    assert "'api_key': '•••'  (masked: the key says secret)" in text and "hunter2" not in text


def test_credentials_in_dataframe_cells_are_masked_and_reprs_not_run():
    class Client:
        def __repr__(self):
            return f"Client(key={OPENAI!r})"

    ns = {
        "frame": pd.DataFrame({"who": ["a"], "value": [GITHUB]}),
        "client": Client(),
        "pairs": [("github", GITHUB)],
    }
    texts = [run(inspect_variable, ns, name=name).text for name in ns]
    texts.append(run(list_variables, ns).text)
    for text in texts:
        assert GITHUB not in text and OPENAI not in text
    assert "ghp_•••" in texts[0] and "Client(" not in texts[1]  # its repr is never run


# --- nothing of the user's code runs --------------------------------------------------------


class Tripwire:
    """Records every special method the inspector calls."""

    calls: ClassVar[list[str]] = []

    def __len__(self):
        Tripwire.calls.append("__len__")
        return 3

    def __iter__(self):
        Tripwire.calls.append("__iter__")
        return iter([1, 2, 3])

    def __str__(self):
        Tripwire.calls.append("__str__")
        return "tripwire"

    def __repr__(self):
        Tripwire.calls.append("__repr__")
        return "Tripwire()"

    def __sizeof__(self):
        Tripwire.calls.append("__sizeof__")
        return 10**9

    def __getattr__(self, name):
        Tripwire.calls.append(f"__getattr__({name})")
        raise AttributeError(name)

    @property
    def expensive(self):
        Tripwire.calls.append("expensive")
        return 1


class TrickyDict(dict[str, object]):
    def __len__(self):
        Tripwire.calls.append("TrickyDict.__len__")
        return 0

    def __iter__(self):
        Tripwire.calls.append("TrickyDict.__iter__")
        return iter(())

    def __repr__(self):
        Tripwire.calls.append("TrickyDict.__repr__")
        return "{}"


def test_inspection_runs_no_user_code(ns):
    Tripwire.calls = []
    consumed = []

    def gen():
        consumed.append(1)
        yield 1

    ns.update(
        trip=Tripwire(),
        box=[Tripwire(), {"inner": Tripwire()}],
        tricky=TrickyDict(a=1, b=Tripwire()),
        g=gen(),
    )
    run(list_variables, ns)
    assert Tripwire.calls == []  # listing runs no user code at all
    text = run(inspect_variable, ns, name="trip").text
    assert text.startswith("trip: test_namespace_tools.Tripwire, ~")
    assert Tripwire.calls == []  # described by type, size and attributes only
    text = run(inspect_variable, ns, name="box").text
    assert "<tests.test_namespace_tools.Tripwire object>" in text or "Tripwire object>" in text
    text = run(inspect_variable, ns, name="tricky").text
    assert "tricky: test_namespace_tools.TrickyDict, 2 keys" in text
    assert Tripwire.calls == []  # items read through dict's own methods, not the subclass's
    text = run(inspect_variable, ns, name="g").text
    assert "not advanced" in text and consumed == []


def test_an_object_with_a_failing_or_huge_repr_is_described_without_it():
    class Broken:
        def __repr__(self):
            raise RuntimeError("no repr today")

    class Huge:
        def __init__(self):
            self.text = "x" * 100_000

        def __repr__(self):
            return "x" * 100_000

    text = run(inspect_variable, {"b": Broken()}, name="b").text
    assert "Broken, ~" in text and "RuntimeError" not in text
    text = run(inspect_variable, {"h": Huge()}, name="h").text
    assert "text: str 'xxx" in text and len(text) < 1_000
    assert safe_repr(10**5000).startswith("<int of")


# --- through an agent ---------------------------------------------------------------------------


def test_tools_declare_kernel_inspection(workspace):
    assert [t.name for t in NAMESPACE_TOOLS] == ["list_variables", "inspect_variable"]
    for t in NAMESPACE_TOOLS:
        assert t.category == "kernel"
        assert t.permissions == frozenset({Permission.INSPECT_KERNEL})
    assert list_variables.summary({}) == "List the kernel's variables"
    assert inspect_variable.summary({"name": "df"}) == "Inspect df"
    assert set(list_variables.input_schema["properties"]) == {"include_private", "include_modules"}
    agent = Agent("planner", ScriptedModel(), workspace=workspace, tools=NAMESPACE_TOOLS)
    offered = {t.name for t in agent.tools.allowed(agent.roles["planner"].permissions)}
    assert {"list_variables", "inspect_variable"} <= offered  # read-only: the planner has them


async def test_an_agent_inspects_variables_and_never_sees_secrets(workspace, ns):
    model = ScriptedModel(
        [
            call("list_variables"),
            call("inspect_variable", name="df"),
            call("inspect_variable", name="OPENAI_API_KEY"),
            call("inspect_variable", name="dff"),
            {"text": "done"},
        ]
    )
    agent = Agent("planner", model, workspace=workspace, tools=NAMESPACE_TOOLS, persist=False)
    agent.resources.insert(KernelNamespace(ns))
    await agent.run("what data is loaded?")
    results = [r for m in agent.history for r in m.tool_results]
    assert [r.is_error for r in results] == [False, False, False, True]
    assert results[1].text.startswith("df: pandas.DataFrame, 6 rows × 4 columns")
    assert results[3].text == "There is no variable named 'dff'. Close matches: df."
    for r in results:
        assert OPENAI not in r.text and GITHUB not in r.text and "hunter2" not in r.text


def test_polars_frames_series_and_lazy_queries():
    import polars as pl

    ns = {
        "pf": pl.DataFrame(
            {"region": ["n", "s", None], "sales": [1.5, None, 3.0], "secret_key": list("abc")}
        ),
        "ps": pl.Series("score", [3, 1, 2]),
        "lz": pl.DataFrame({"a": [1]}).lazy().filter(pl.col("a") > 0),
    }
    listing = run(list_variables, ns).text
    assert "pf    polars.DataFrame  3×3" in listing
    assert "ps    polars.Series     len 3" in listing
    text = run(inspect_variable, ns, name="pf").text
    assert text.startswith("pf: polars.DataFrame, 3 rows × 3 columns, ~")
    assert "  sales (Float64)" in text and "null_count" in text
    assert "•••" in text and "┆ a " not in text  # the secret column's values are masked
    text = run(inspect_variable, ns, name="ps").text
    assert text.startswith("ps: polars.Series, 3 values, dtype Int64, name 'score'")
    # A lazy query is never collected: that would run the user's computation.
    text = run(inspect_variable, ns, name="lz").text
    assert "it is not collected here" in text


def test_secrets_only_a_neighbouring_name_marks_are_masked():
    """A name/value table and a list of (name, value) pairs: the value is secret because
    of the name beside it, not its own shape or an environment variable."""
    ns = {
        "settings": pd.DataFrame(
            {"name": ["user", "password", "host"], "value": ["alice", "hunter2-xyz", "db1"]}
        ),
        "pairs": [("user", "alice"), ("password", "hunter2-xyz")],
    }
    frame = run(inspect_variable, ns, name="settings").text
    assert "hunter2-xyz" not in frame
    assert "alice" in frame and "db1" in frame  # rows without a secret name are shown
    assert "masked: a cell beside them names a secret" in frame
    assert ns["settings"].loc[1, "value"] == "hunter2-xyz"  # the user's frame is untouched
    for text in (run(inspect_variable, ns, name="pairs").text, run(list_variables, ns).text):
        assert "hunter2-xyz" not in text
