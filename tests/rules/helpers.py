"""Shared helpers of the rules tests: data paths and small constructors."""

import json
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"
POSITIONS = json.loads((DATA / "positions.json").read_text(encoding="utf-8"))
PDN_FILES = [DATA / "OCA_2.0.pdn", DATA / "inferno.pdn"]


def move_strings(position):
    """The set of full-form move strings legal in ``position``."""
    return {str(move) for move in position.legal_moves()}
