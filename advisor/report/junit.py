"""JUnit XML, the test report every CI shows (GitLab's `artifacts:reports:junit`, Jenkins, Azure, the
GitHub test-report actions): the CI gates as test cases.

- compare: one test case per gate (regression, new findings), failed when the gate fails and skipped when
  its option was not given;
- fleet: one test case per stored profile, failed when the profile could not be analysed (fleet has no
  severity gate; its findings are listed in the case's system-out).

Built with ElementTree, so every attribute and text is escaped; characters XML 1.0 cannot hold at all
(control characters a profile may carry) are replaced first."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclass(frozen=True)
class Gate:
    """One CI gate of a command and what it found: `name` (regression, new), `title` for people, the
    option that sets it as given (None: not asked), and its failure messages (empty: it passed)."""

    name: str
    title: str
    option: str | None
    failures: tuple[str, ...] = ()


def clean(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def _suite(name: str, cases: Sequence[ET.Element]) -> ET.Element:
    counts = {"tests": len(cases), "failures": sum(c.find("failure") is not None for c in cases),
              "errors": 0, "skipped": sum(c.find("skipped") is not None for c in cases)}
    suite = ET.Element("testsuite", {"name": name, **{k: str(v) for k, v in counts.items()}})
    suite.extend(cases)
    return suite


def _document(suite: ET.Element) -> bytes:
    root = ET.Element("testsuites", {"name": "advisor", **{k: suite.get(k, "0")
                                                          for k in ("tests", "failures", "errors", "skipped")}})
    root.append(suite)
    ET.indent(root)
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def _case(classname: str, name: str) -> ET.Element:
    return ET.Element("testcase", {"classname": clean(classname), "name": clean(name), "time": "0"})


def compare_junit(gates: Sequence[Gate], before: str, after: str) -> bytes:
    """`advisor compare --format junit`: the suite `advisor compare` with one case per gate."""
    cases = []
    for gate in gates:
        case = _case("advisor.compare", f"{gate.title} ({before} → {after})")
        if gate.option is None:
            ET.SubElement(case, "skipped", {"message": clean(f"the {gate.title} gate was not asked for")})
        elif gate.failures:
            failure = ET.SubElement(case, "failure", {"message": clean(gate.failures[0]), "type": gate.name})
            failure.text = clean("\n".join(gate.failures))
        else:
            ET.SubElement(case, "system-out").text = clean(f"{gate.option}: passed")
        cases.append(case)
    return _document(_suite("advisor compare", cases))


def fleet_junit(profiles: Sequence[Mapping[str, Any]], findings: Sequence[Mapping[str, Any]]) -> bytes:
    """`advisor fleet --format junit`: the suite `advisor fleet` with one case per stored profile."""
    by_path: dict[str, list[str]] = {}
    for row in findings:
        by_path.setdefault(_text(row.get("path")), []).append(
            f"{_text(row.get('kind'))}/{_text(row.get('rule'))} ({_text(row.get('severity'))}): "
            f"{_text(row.get('title'))}")
    cases = []
    for row in profiles:
        path = _text(row.get("path"))
        case = _case(f"advisor.fleet.{_text(row.get('kind')) or 'unknown'}", path)
        if _text(row.get("status")) == "error":
            message = _text(row.get("error")) or "analysis failed"
            ET.SubElement(case, "failure", {"message": clean(message), "type": "analysis-error"}).text = clean(message)
        else:
            listed = by_path.get(path, [])
            ET.SubElement(case, "system-out").text = clean("\n".join(listed) if listed else "no findings")
        cases.append(case)
    return _document(_suite("advisor fleet", cases))


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""
