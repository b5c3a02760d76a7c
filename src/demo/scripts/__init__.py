"""Demo stand-in package (see src/demo/scripts/train_showcase.py)."""
