# One line per unit-test file in tests/unit/ (the file name without .cpp).
connector_unit_test(test_keccak)
connector_unit_test(test_address)
connector_unit_test(test_deposit_address)
connector_unit_test(test_amount)
connector_unit_test(test_query_string)
connector_unit_test(test_params)
connector_unit_test(test_config)
connector_unit_test(test_etag)
connector_unit_test(test_object_text)
connector_unit_test(test_router)
connector_unit_test(test_endpoints)
connector_unit_test(test_import_document)
connector_unit_test(test_history_statements)
connector_unit_test(test_page_walk)
connector_unit_test(test_snapshot)
connector_unit_test(test_new_row_budget)
connector_unit_test(test_replica_lag)
connector_unit_test(test_db_servers)
connector_unit_test(test_web_server_addrs)
connector_unit_test(test_fcgi_screen)
# The screen's passed requests are read by libfcgi too (tests/libfcgi_reading.h).
target_include_directories(test_fcgi_screen PRIVATE ${FCGI_INCLUDE_DIR} ${PROJECT_SOURCE_DIR}/tests)
target_link_libraries(test_fcgi_screen PRIVATE ${FCGI_LIBRARY})
connector_unit_test(test_fuzz_regressions)
# Inputs that once crashed a fuzz target: a unit test, and the one ctest entry labelled fuzz (the
# targets themselves run under scripts/fuzz, in build-fuzz/).
set_tests_properties(unit.test_fuzz_regressions PROPERTIES LABELS "unit;fuzz")
# The worker's FastCGI record writer (fcgi/), compiled in on its own.
if(TARGET connector-worker)
  add_executable(test_stdout_records unit/test_stdout_records.cpp
                 ${PROJECT_SOURCE_DIR}/fcgi/stdout_records.cpp)
  target_include_directories(test_stdout_records PRIVATE ${PROJECT_SOURCE_DIR}/fcgi
                             ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(test_stdout_records PRIVATE Boost::unit_test_framework)
  target_compile_definitions(test_stdout_records PRIVATE BOOST_TEST_DYN_LINK)
  add_test(NAME unit.test_stdout_records COMMAND test_stdout_records)
  set_tests_properties(unit.test_stdout_records PROPERTIES LABELS unit)
endif()
# Connections waiting for their whole request (fcgi/), with the screen they are judged by.
if(TARGET connector-worker)
  add_executable(test_pending_requests unit/test_pending_requests.cpp
                 ${PROJECT_SOURCE_DIR}/fcgi/pending_requests.cpp
                 ${PROJECT_SOURCE_DIR}/fcgi/request_screen.cpp)
  target_include_directories(test_pending_requests PRIVATE ${PROJECT_SOURCE_DIR}/fcgi)
  target_link_libraries(test_pending_requests PRIVATE connector Boost::unit_test_framework)
  target_compile_definitions(test_pending_requests PRIVATE BOOST_TEST_DYN_LINK)
  add_test(NAME unit.test_pending_requests COMMAND test_pending_requests)
  set_tests_properties(unit.test_pending_requests PROPERTIES LABELS unit)
endif()
# The kept connections' bookkeeping (fcgi/).
if(TARGET connector-worker)
  add_executable(test_kept_connections unit/test_kept_connections.cpp
                 ${PROJECT_SOURCE_DIR}/fcgi/kept_connections.cpp)
  target_include_directories(test_kept_connections PRIVATE ${PROJECT_SOURCE_DIR}/fcgi)
  target_link_libraries(test_kept_connections PRIVATE Boost::unit_test_framework)
  target_compile_definitions(test_kept_connections PRIVATE BOOST_TEST_DYN_LINK)
  add_test(NAME unit.test_kept_connections COMMAND test_kept_connections)
endif()
