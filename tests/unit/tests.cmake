# One line per unit-test file in tests/unit/ (the file name without .cpp).
