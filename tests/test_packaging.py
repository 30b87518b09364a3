"""What users install (issue 40): the tested CPythons named alike everywhere they are listed,
the version written once, and, when the suite runs against a wheel of ``scripts/wheels``
installed by ``scripts/test-wheel`` (``POLYCODEC_TEST_WHEEL`` names it), that the package the
suite imports is that wheel's files and that its metadata is what PyPI will show."""

from __future__ import annotations

import base64
import csv
import email.message
import email.parser
import hashlib
import io
import os
import re
import shutil
import sys
import sysconfig
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

import polycodec

ROOT = Path(__file__).resolve().parents[1]
with open(ROOT / "pyproject.toml", "rb") as _file:
    PYPROJECT = tomllib.load(_file)
with open(ROOT / "Cargo.toml", "rb") as _file:
    CARGO_VERSION = tomllib.load(_file)["workspace"]["package"]["version"]
#: The interpreters the test command runs the suite on: the one list the others must equal.
TESTED = re.search(r"^all_versions=\(([\d. ]+)\)$", (ROOT / "scripts" / "test").read_text(), re.M)
TESTED_VERSIONS = TESTED[1].split() if TESTED else []
WHEEL = os.environ.get("POLYCODEC_TEST_WHEEL")
needs_wheel = pytest.mark.skipif(
    not WHEEL, reason="runs against an installed wheel (scripts/test-wheel run sets this up)"
)


def _classifier_versions(classifiers: list[str]) -> list[str]:
    prefix = "Programming Language :: Python :: "
    return [c[len(prefix) :] for c in classifiers if re.fullmatch(re.escape(prefix) + r"3\.\d+", c)]


def test_tested_versions_are_listed_alike_everywhere() -> None:
    assert TESTED_VERSIONS == ["3.11", "3.13", "3.14", "3.15"]
    assert _classifier_versions(PYPROJECT["project"]["classifiers"]) == TESTED_VERSIONS
    wheels = re.search(
        r"^all_versions=\(([\d. ]+)\)$", (ROOT / "scripts" / "wheels").read_text(), re.M
    )
    assert wheels and wheels[1].split() == TESTED_VERSIONS
    workflow = (ROOT / ".github" / "workflows" / "release.yml").read_text()
    matrices = re.findall(r"^\s+python: \[(.*)\]$", workflow, re.M)
    assert matrices, "release.yml has no python matrix"
    for matrix in matrices:
        assert re.findall(r'"([^"]+)"', matrix) == TESTED_VERSIONS
    # The jobs that build every version at once set them all up.
    setups = re.findall(r'python-version: "(3[\d.\\n]+)"', workflow)
    assert setups and all(s.split("\\n") == TESTED_VERSIONS for s in setups), setups
    # requires-python admits exactly the tested versions up to the newest (later ones are
    # admitted, as is usual, until one is found to break).
    admitted = SpecifierSet(PYPROJECT["project"]["requires-python"])
    known = [f"3.{minor}" for minor in range(6, 16)]
    assert [v for v in known if f"{v}.0" in admitted] == TESTED_VERSIONS


def test_release_workflow_leaves_free_threaded_out_saying_why() -> None:
    workflow = (ROOT / ".github" / "workflows" / "release.yml").read_text()
    code = "\n".join(line.split("#")[0] for line in workflow.splitlines())
    assert not re.search(r"3\.1\dt\b", code)
    assert re.search(r"#.*3\.14t", workflow) and "free-threaded" in workflow
    # The build refuses one (src/lib.rs: compile_error! under Py_GIL_DISABLED).
    assert (
        'compile_error!(\n    "polycodec does not support free-threaded'
        in (ROOT / "src" / "lib.rs").read_text()
    )


def test_version_comes_from_cargo_toml() -> None:
    assert "version" in PYPROJECT["project"]["dynamic"]
    assert "version" not in PYPROJECT["project"]
    assert polycodec.__version__ == CARGO_VERSION


def test_changelog_has_a_section_for_the_version() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in changelog
    assert re.search(rf"^## \[{re.escape(CARGO_VERSION)}\] - ", changelog, re.M)
    assert re.search(rf"^\[{re.escape(CARGO_VERSION)}\]: https://", changelog, re.M)


def test_readme_links_are_absolute_for_pypi() -> None:
    """PyPI shows the README as the description; a relative link there leads nowhere."""
    readme = (ROOT / "README.md").read_text()
    targets = re.findall(r"\]\(([^)\s]+)\)", readme)
    assert targets
    relative = [t for t in targets if not re.match(r"https?://", t)]
    assert relative == []
    files = PYPROJECT["project"]["urls"]["Repository"] + "/blob/main/"
    for target in targets:
        if target.startswith(files):
            assert (ROOT / target[len(files) :].split("#")[0]).exists(), target


def _metadata(text: str) -> email.message.Message:
    return email.parser.HeaderParser().parsestr(text)


def _wheel() -> Path:
    assert WHEEL is not None
    return Path(WHEEL)


@needs_wheel
def test_the_suite_imports_the_installed_wheel_with_no_rust_on_path() -> None:
    wheel = _wheel()
    assert sys.prefix != sys.base_prefix, "not in a virtual environment"
    site = {Path(sysconfig.get_path(kind)).resolve() for kind in ("purelib", "platlib")}
    package = Path(polycodec.__file__).resolve().parent
    assert package.parent in site
    assert str(ROOT / "python") not in [str(Path(p).resolve()) for p in sys.path if p]
    assert shutil.which("cargo") is None and shutil.which("rustc") is None
    # Every file the wheel's RECORD lists is installed with the wheel's bytes.
    with zipfile.ZipFile(wheel) as archive:
        record = next(n for n in archive.namelist() if n.endswith(".dist-info/RECORD"))
        rows = list(csv.reader(io.StringIO(archive.read(record).decode())))
        checked = 0
        for name, digest, _size in rows:
            if not digest:
                continue
            installed = package.parent / name
            data = installed.read_bytes()
            assert data == archive.read(name), name
            algorithm, _, expected = digest.partition("=")
            actual = base64.urlsafe_b64encode(hashlib.new(algorithm, data).digest()).rstrip(b"=")
            assert actual.decode() == expected, name
            checked += 1
    extension = Path(polycodec._polycodec.__file__).resolve()
    assert extension.parent == package and extension.name.endswith(
        ".so" if os.name != "nt" else ".pyd"
    )
    assert f"polycodec/{extension.name}" in {row[0] for row in rows}
    assert checked >= 15


@needs_wheel
def test_wheel_metadata_is_what_users_see() -> None:
    import importlib.metadata

    wheel = _wheel()
    version = polycodec.__version__
    assert importlib.metadata.version("polycodec") == version
    with zipfile.ZipFile(wheel) as archive:
        info = f"polycodec-{version}.dist-info"
        metadata = _metadata(archive.read(f"{info}/METADATA").decode())
        tags = _metadata(archive.read(f"{info}/WHEEL").decode())
        licence = archive.read(f"{info}/licenses/LICENSE").decode()
    assert metadata["Name"] == "polycodec" and metadata["Version"] == version
    assert _classifier_versions(metadata.get_all("Classifier")) == TESTED_VERSIONS
    assert SpecifierSet(metadata["Requires-Python"]) == SpecifierSet(
        PYPROJECT["project"]["requires-python"]
    )
    assert metadata["License-Expression"] == "MIT"
    assert metadata.get_all("License-File") == ["LICENSE"]
    assert licence == (ROOT / "LICENSE").read_text() and licence.startswith("MIT License")
    urls = dict(u.split(", ", 1) for u in metadata.get_all("Project-URL"))
    assert urls == PYPROJECT["project"]["urls"]
    assert metadata["Description-Content-Type"].startswith("text/markdown")
    assert metadata.get_payload().strip() == (ROOT / "README.md").read_text().strip()
    # One wheel per CPython (no stable ABI: the extension reads version-specific layouts),
    # tagged for the oldest C library the build allows.
    python = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    assert tags["Root-Is-Purelib"] == "false"
    for tag in tags.get_all("Tag"):
        assert tag.startswith(f"{python}-{python}-")
        if sys.platform == "linux":
            assert re.fullmatch(r".*-(manylinux2014|manylinux_2_17|musllinux_1_2)_\w+", tag), tag


@needs_wheel
def test_sdist_beside_the_wheel_carries_the_same_metadata() -> None:
    wheel = _wheel()
    version = polycodec.__version__
    sdist = wheel.parent / f"polycodec-{version}.tar.gz"
    if not sdist.exists():
        pytest.skip(f"no sdist beside {wheel.name} (a platform job of the release workflow)")
    with zipfile.ZipFile(wheel) as archive:
        from_wheel = _metadata(archive.read(f"polycodec-{version}.dist-info/METADATA").decode())
    with tarfile.open(sdist) as archive:
        top = f"polycodec-{version}"
        member = archive.extractfile(f"{top}/PKG-INFO")
        assert member is not None
        from_sdist = _metadata(member.read().decode())
        names = set(archive.getnames())
    for field in ["Name", "Version", "Requires-Python", "License-Expression", "Summary"]:
        assert from_sdist[field] == from_wheel[field], field
    assert from_sdist.get_all("Classifier") == from_wheel.get_all("Classifier")
    for needed in ["LICENSE", "Cargo.lock", "Cargo.toml", "pyproject.toml", "formats/Cargo.toml"]:
        assert f"{top}/{needed}" in names, needed
    # A development build's extension (ignored by git) never reaches the sdist.
    assert not [n for n in names if n.endswith((".so", ".pyd"))]
