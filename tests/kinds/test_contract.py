"""The kind contract (advisor/kinds/contract.py, check.py, data_schema.py): every installed kind passes
`kinds.check()`, and a kind that breaks it (a misspelt section place, report function or data key, a
function the stages cannot call) is refused with one line naming the kind and the file."""

import hashlib
import shutil
from pathlib import Path

import pytest

from advisor import kinds
from advisor.core.errors import AdvisorError
from advisor.kinds.base import ProfileKind
from advisor.kinds.contract import PLACES

TOY = Path(__file__).parent / "toy_kind"


@pytest.mark.parametrize("kind", kinds.available(), ids=lambda k: k.name)
def test_every_installed_kind_honours_the_contract(kind):
    kinds.check(kind)
    assert set(kind.report().places) <= set(PLACES)
    assert kind.adapters().detect(Path("no-such-file"), b"") is False


def _toy_variant(tmp_path, monkeypatch, name: str, edit=None) -> ProfileKind:
    """A copy of the toy kind as package `name`, with `edit(folder)` applied: the kind a plug-in author
    would have written with that mistake."""
    folder = tmp_path / name
    shutil.copytree(TOY, folder, ignore=shutil.ignore_patterns("__pycache__"))
    for path in folder.rglob("*.py"):
        path.write_text(path.read_text().replace("toy_kind", name).replace('name="toy"', f'name="{name}"'))
    pack = folder / "rules" / "pack.yaml"
    pack.write_text(pack.read_text().replace("kinds: [toy]", f"kinds: [{name}]"))
    if edit:
        edit(folder)
    monkeypatch.syspath_prepend(str(tmp_path))
    return ProfileKind(name=name, title="Toy", formats="toy", package=name, folder=folder / "data")


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_the_toy_kind_passes(tmp_path, monkeypatch):
    kinds.check(_toy_variant(tmp_path, monkeypatch, "toy_ok"))


def test_a_misspelt_section_place_is_refused(tmp_path, monkeypatch):
    kind = _toy_variant(tmp_path, monkeypatch, "toy_place", lambda f: _replace(
        f / "report.py", 'PLACES = ("utilisation",)', 'PLACES = ("utilization",)'))
    with pytest.raises(AdvisorError) as err:
        kinds.check(kind)
    message = str(err.value)
    assert "profile kind 'toy_place'" in message and "toy_place/report.py" in message
    assert "PLACES names 'utilization', not a place of the report" in message
    assert "did you mean 'utilisation'?" in message


def test_sections_under_an_undeclared_place_are_an_error_not_a_missing_section(tmp_path, monkeypatch):
    kind = _toy_variant(tmp_path, monkeypatch, "toy_undeclared", lambda f: _replace(
        f / "report.py", "    view = View(analysis)\n    rows =",
        '    return {"memory": []}\n    view = View(analysis)\n    rows ='))
    kinds.check(kind)  # the declared places are fine; what sections() returns is checked when it runs
    with pytest.raises(AdvisorError, match=r"sections placed under 'memory', which its PLACES \(utilisation\) "
                                           r"do not declare"):
        kind.report().sections(None)


def test_sections_without_places_are_refused(tmp_path, monkeypatch):
    kind = _toy_variant(tmp_path, monkeypatch, "toy_noplaces", lambda f: _replace(
        f / "report.py", 'PLACES = ("utilisation",)', ''))
    with pytest.raises(AdvisorError, match=r"has sections\(\) but no PLACES"):
        kinds.check(kind)


def test_a_misspelt_report_function_is_refused(tmp_path, monkeypatch):
    kind = _toy_variant(tmp_path, monkeypatch, "toy_function", lambda f: _replace(
        f / "report.py", "def setup_rows(", "def setup_row("))
    with pytest.raises(AdvisorError, match=r"function 'setup_row' is not a report part; did you mean 'setup_rows'"):
        kinds.check(kind)


def test_an_adapter_the_stages_cannot_call_is_refused(tmp_path, monkeypatch):
    kind = _toy_variant(tmp_path, monkeypatch, "toy_detect", lambda f: _replace(
        f / "adapters.py", "def detect(path: Path, head: bytes)", "def detect(path: Path)"))
    with pytest.raises(AdvisorError, match=r"toy_detect/adapters.py\): detect\(\) cannot be called with 2"):
        kinds.check(kind)


def test_a_kind_without_load_is_refused(tmp_path, monkeypatch):
    kind = _toy_variant(tmp_path, monkeypatch, "toy_load", lambda f: _replace(
        f / "adapters.py", "def load(", "def read("))
    with pytest.raises(AdvisorError, match=r"has no function load\(\)"):
        kinds.check(kind)


@pytest.mark.parametrize(("file", "text", "message"), [
    ("report.yaml", "subjcet: run\n", r"report.yaml\): subjcet: unknown key; did you mean 'subject'\?"),
    ("report.yaml", "overview: {where: {title: Core, feilds: [a]}}\n",
     r"overview.where.feilds: unknown key; did you mean 'fields'"),
    ("report.yaml", "fleet: {endings: .csv}\n", r"fleet.endings: expected a list, got text"),
    ("compare.yaml", "groups: [{name: time}]\n", r"compare.yaml\): groups\[0\]: missing metrics"),
    ("compare.yaml", "breakdowns: [{name: a, column: b, better: more}]\n",
     r"breakdowns\[0\].better: 'more' is not one of higher, lower"),
    ("conventions.yaml", "percent_scal: 100\n", r"percent_scal: unknown key; did you mean 'percent_scale'"),
])
def test_a_misspelt_or_misshapen_data_key_is_refused(tmp_path, monkeypatch, file, text, message):
    def edit(folder: Path) -> None:
        path = folder / "data" / file
        path.write_text((path.read_text() if path.exists() else "") + text)

    slug = hashlib.sha256(text.encode()).hexdigest()[:8]
    kind = _toy_variant(tmp_path, monkeypatch, f"toy_{file.split('.')[0]}_{slug}", edit)
    with pytest.raises(AdvisorError, match=message) as err:
        kinds.check(kind)
    assert f"profile kind '{kind.name}'" in str(err.value) and file in str(err.value)


def test_a_kind_adds_its_own_keys_in_its_schema(tmp_path, monkeypatch):
    def edit(folder: Path) -> None:
        (folder / "data" / "report.yaml").write_text("toy_rows: [[a, b]]\n")
        (folder / "data" / "schema.yaml").write_text(
            "report.yaml:\n  keys:\n    toy_rows: {list: {tuple: [str, str]}}\n")

    kinds.check(_toy_variant(tmp_path, monkeypatch, "toy_own", edit))


def test_a_kind_schema_may_not_redefine_a_shared_key(tmp_path, monkeypatch):
    def edit(folder: Path) -> None:
        (folder / "data" / "schema.yaml").write_text("report.yaml:\n  keys:\n    subject: int\n")

    with pytest.raises(AdvisorError, match=r"report.yaml: key 'subject' is shared"):
        kinds.check(_toy_variant(tmp_path, monkeypatch, "toy_redefine", edit))


def test_a_plugin_with_a_misspelt_key_is_refused_when_its_file_is_read(tmp_path, monkeypatch, capsys):
    """A data file is checked the first time a stage reads it (registration reads only options.yaml): the
    report names the kind, the file and the key, exit 2, and writes nothing."""
    from advisor.cli import main

    _toy_variant(tmp_path, monkeypatch, "toy_reg", lambda f: (f / "data" / "report.yaml").write_text("subjct: x\n"))
    info = tmp_path / "toy_reg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-reg\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[advisor.kinds]\ntoy_reg = toy_reg\n")
    out = tmp_path / "r.md"
    assert main(["report", str(Path(__file__).parent / "sample.toy"), "-o", str(out)]) == 2
    assert not out.exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("advisor: error: profile kind 'toy_reg'")
    assert "subjct: unknown key; did you mean 'subject'?" in err[0]


@pytest.mark.parametrize(("shape", "got"), [("metrics", "dict"), ("no summary", "a tuple of 2"),
                                            ("three", "a tuple of 3")])
def test_a_summary_of_the_wrong_shape_is_one_line_naming_the_kind(shape, got):
    """summarize() must return (TraceSummary, {metric: value}); anything else names the kind and its module
    (it was an internal error, "too many values to unpack", in the review's scratch kind)."""
    from advisor.core.events import EventTrace
    from advisor.core.trace import DMA_SIZE_EDGES, TraceSummary
    from advisor.kinds.contract import Events, summarize_events

    summary = TraceSummary(events={}, span=1.0, engines=(), busy_union=None, dma_size_edges=DMA_SIZE_EDGES,
                           dma_size_counts=(0,) * (len(DMA_SIZE_EDGES) - 1), timeline_edges=(), timeline={},
                           gaps=(), warnings=())
    metrics = {"busy": 0.5}
    returned = {"metrics": metrics, "no summary": (None, metrics), "three": (summary, metrics, 1)}[shape]
    trace = EventTrace(tables={}, summary={}, metadata={})
    with pytest.raises(AdvisorError) as caught:
        summarize_events(Events(lambda t, total: returned, "scratch", "/x/scratch/events.py"), trace, 1.0, None)
    assert caught.value.where == "profile kind 'scratch' (/x/scratch/events.py)"
    assert caught.value.problem == (f"summarize() returned {got}; the contract expects "
                                    "(TraceSummary, {metric: value})")
    good = Events(lambda t, total: (summary, metrics), "scratch", "")
    assert summarize_events(good, trace, 1.0, None) == (summary, metrics)


def test_the_kinds_check_refuses_a_bad_options_file(tmp_path, monkeypatch):
    """options.yaml is checked by kinds.check() as the other data files are, with the command line's own rules
    (a flag without its help), not only when a command line is built."""
    kind = _toy_variant(tmp_path, monkeypatch, "opts",
                        lambda folder: (folder / "data" / "options.yaml").write_text("options:\n  - {flag: --x}\n"))
    with pytest.raises(AdvisorError, match=r"options\[0\] \(--x\): help is required"):
        kinds.check(kind)
