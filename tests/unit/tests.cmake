# One line per unit-test file in tests/unit/ (the file name without .cpp).
connector_unit_test(test_keccak)
connector_unit_test(test_address)
connector_unit_test(test_deposit_address)
connector_unit_test(test_amount)
