"""The one YAML reader: the C loader when PyYAML has it, same data as SafeLoader, still safe."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from geoask.base.yamlio import SAFE_LOADER, load_yaml

ROOT = Path(__file__).resolve().parents[1]


def test_uses_libyaml_when_pyyaml_has_it() -> None:
    expected = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader
    assert SAFE_LOADER is expected


@pytest.mark.parametrize("path", [*sorted((ROOT / "benchmark").rglob("*.yaml")),
                                  ROOT / "geoask" / "catalog" / "catalog.yaml"],
                         ids=lambda path: str(path.relative_to(ROOT)))
def test_same_data_as_the_python_safe_loader(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert load_yaml(text) == yaml.safe_load(text)


def test_python_object_tags_are_refused() -> None:
    with pytest.raises(yaml.constructor.ConstructorError):
        load_yaml("!!python/object/apply:os.system ['true']")


def test_a_syntax_error_has_its_place() -> None:
    with pytest.raises(yaml.YAMLError) as raised:
        load_yaml("a: [1, 2\nb: 3\n")
    mark = raised.value.problem_mark  # type: ignore[attr-defined]
    assert mark is not None and mark.line >= 1


def test_a_parsed_file_is_kept_until_it_changes(tmp_path: Path) -> None:
    from geoask.base.yamlio import parsed_file

    path = tmp_path / "cases.yaml"
    path.write_text("a: 1\n")
    calls: list[Path] = []

    def parse(file: Path) -> tuple[int, ...]:
        calls.append(file)
        return (load_yaml(file.read_text())["a"],)

    assert parsed_file(path, parse) == (1,)
    assert parsed_file(path, parse) == (1,)
    assert len(calls) == 1
    path.write_text("a: 22\n")  # another size: read again
    assert parsed_file(path, parse) == (22,)
    assert len(calls) == 2


def test_a_failed_parse_is_not_kept(tmp_path: Path) -> None:
    from geoask.base.yamlio import parsed_file

    path = tmp_path / "bad.yaml"
    path.write_text("a: [1\n")

    def parse(file: Path) -> object:
        return load_yaml(file.read_text())

    for _ in range(2):
        with pytest.raises(yaml.YAMLError):
            parsed_file(path, parse)
