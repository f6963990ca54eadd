# SPDX-License-Identifier: MIT
"""A package whose submodule does its work at import (imports.py)."""
