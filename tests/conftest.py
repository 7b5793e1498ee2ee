import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "papers" / "silica_bragg_2026"
sys.path.insert(0, str(REPO))

# Tests never reach a real model: no key may leak in from the environment.
os.environ.pop("ANTHROPIC_API_KEY", None)


@pytest.fixture
def example_paper():
    from reprolab.paper import Paper

    return Paper(EXAMPLE)
