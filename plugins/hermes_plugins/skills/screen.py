"""The skills index, scanned like a context file (issue 31).

A skill installed from someone else's repository puts its name and description in the system
prompt, in the index the model is told to read before answering. Each line of the index is
screened with the ``hermes_context_scan`` scanners: a line with a high finding is replaced by
a marker (the skill's name stays, so ``skill_view`` can still be asked for it) and a warning
names its SKILL.md; a low finding keeps the line, with a warning. The index is scanned once
when it is built and the screened index is what the host's cache keeps.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hermes_plugins._common.screening import HIGH, describe, severity
from hermes_plugins.skills.metadata import ROW_LINE, ROW_NAME, ROW_PATH

#: The scanners' findings for one text (``hermes_plugins._common.screening.findings`` with a context bound).
Scan = Callable[[str], Sequence[str]]


def _where(rel: str, roots: Sequence[str]) -> str:
    """The SKILL.md a row came from: its path under the first skills source that holds it."""
    for root in roots:
        candidate = os.path.join(root, rel)
        if os.path.exists(candidate):
            return candidate
    return rel


def screen_groups(
    groups: Mapping[str, Sequence[list[Any]]],
    categories: Mapping[str, str],
    scan: Scan,
    roots: Sequence[str],
) -> tuple[dict[str, list[list[Any]]], dict[str, str], list[tuple[str, str, str, dict[str, Any]]]]:
    """``groups`` and ``categories`` with every line the scanners block replaced by a marker,
    and the warnings ``(kind, message, path, details)``. Rows are copied, never changed in
    place: the scan and the snapshot share them."""
    out_groups = {c: list(rows) for c, rows in groups.items()}
    out_categories = dict(categories)
    warnings: list[tuple[str, str, str, dict[str, Any]]] = []
    every = [row[ROW_LINE] for rows in groups.values() for row in rows]
    every += [f"  {c}: {d}" for c, d in categories.items() if d]
    whole = list(scan("\n".join(every))) if every else []
    if not whole:
        return out_groups, out_categories, warnings  # one scan for a clean index, the usual case
    seen: set[str] = set()
    for rows in out_groups.values():
        for index, row in enumerate(rows):
            ids = list(scan(row[ROW_LINE]))
            if not ids:
                continue
            seen.update(ids)
            name, path = row[ROW_NAME], _where(str(row[ROW_PATH]), roots)
            high = [i for i in ids if severity(i) == HIGH]
            listed = ", ".join(describe(i) for i in (high or ids))
            details = {"findings": high or ids, "skill": name, "severity": HIGH if high else "low"}
            if not high:
                warnings.append(("skill_description_flagged", f"{path}: the description of skill {name} "
                                 f"resembles prompt injection ({listed}); it is in the skills index - check "
                                 "it if you did not write it", path, details))
                continue
            marker = f"[BLOCKED: description matched prompt-injection pattern(s) {', '.join(high)}]"
            line = f"    - {name}: {marker}"
            if any(severity(i) == HIGH for i in scan(line)):
                line = f"    - {marker}"  # the name itself is the attack: it goes too
            copy = list(row)
            copy[ROW_LINE] = line
            rows[index] = copy
            warnings.append(("skill_description_blocked", f"{path}: the description of skill {name} was "
                             f"left out of the skills index for potential prompt injection ({listed})",
                             path, details))
    for category, description in categories.items():
        ids = list(scan(f"  {category}: {description}")) if description else []
        seen.update(ids)
        high = [i for i in ids if severity(i) == HIGH]
        if high:
            out_categories[category] = f"[BLOCKED: description matched prompt-injection pattern(s) {', '.join(high)}]"
            warnings.append(("skill_description_blocked", f"the description of skill category {category} was "
                             f"left out of the skills index for potential prompt injection "
                             f"({', '.join(describe(i) for i in high)})", category,
                             {"findings": high, "category": category, "severity": HIGH}))
        elif ids:
            warnings.append(("skill_description_flagged", f"the description of skill category {category} "
                             f"resembles prompt injection ({', '.join(describe(i) for i in ids)})", category,
                             {"findings": ids, "category": category, "severity": "low"}))
    unplaced = [i for i in whole if i not in seen]
    if unplaced:  # a finding only the lines together show: nothing to cut, but said
        warnings.append(("skills_index_flagged", "the skills index matches prompt-injection pattern(s) "
                         f"({', '.join(describe(i) for i in unplaced)}) that no single skill's line shows; "
                         "nothing was left out", "", {"findings": unplaced}))
    return out_groups, out_categories, warnings
