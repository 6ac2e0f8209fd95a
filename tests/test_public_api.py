"""The public surface: `__all__` is sorted, complete and importable, and `import toolsearch` stays light."""

import subprocess
import sys

import toolsearch


def test_all_is_sorted_and_importable():
    assert toolsearch.__all__ == sorted(toolsearch.__all__)
    for name in toolsearch.__all__:
        assert getattr(toolsearch, name) is not None, name


def test_all_lists_every_public_top_level_name():
    public = {
        name
        for name, value in vars(toolsearch).items()
        if not name.startswith("_") and not isinstance(value, type(sys))  # skip submodules
    }
    assert public <= set(toolsearch.__all__)


def test_import_is_light():
    code = (
        "import sys, toolsearch; heavy = [m for m in ('torch', 'sentence_transformers', 'matplotlib', "
        "'whoosh', 'openai') if m in sys.modules]; print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
