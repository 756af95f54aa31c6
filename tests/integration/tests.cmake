# Integration tests: every tests/integration/test_*.py is one ctest entry, integration.<name>,
# that drives the real stack (private MariaDB, connector-worker, nginx) through harness.py with
# the binaries of this build tree. Each stack takes free ports and a temporary directory of its
# own, so two tests can run at once (scripts/test runs ctest -j2 at most): most of a test's time
# is spent waiting on servers starting and stopping. The tests that load the machine or measure time alone
# (CONNECTOR_EXCLUSIVE_TESTS) run with nothing beside them.
#
# Only in the plain (not sanitized) build, so that each runs once and with release timings:
#   integration.test_faults, integration.test_soak  faults and a short soak under load
#   integration.test_cache_bounds                    nginx's cache under a flood
#   integration.test_fleet, .test_fleet_nodes, .test_fleet_primary
#                                                    a fleet of three nodes each (scripts/
#                                                    fleet): what clients see, the nodes,
#                                                    the replicas and the primary
#   integration.memcheck                             a set of the tests above with the worker
#                                                    under valgrind's memcheck (memcheck.py)
#
# ctest labels (ctest -L LABEL): every entry here is `integration`; the load tests and memcheck
# also `slow`; the tests that break the stack under the service (processes killed or stopped,
# MariaDB down, hung or restarted, replicas lagging or lost) also `fault`.
find_package(Python3 REQUIRED COMPONENTS Interpreter)

set(CONNECTOR_INTEGRATION_ENV
    "CONNECTOR_BUILD_DIR=${CMAKE_BINARY_DIR};CONNECTOR_REPO=${PROJECT_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1")
set(CONNECTOR_LOAD_TESTS test_faults test_soak test_cache_bounds test_fleet test_fleet_nodes
    test_fleet_primary)
# Alone: the load tests, and the tests whose assertions bound a latency, an interval or a
# recovery time (a second test beside them would only add noise to what they measure).
set(CONNECTOR_EXCLUSIVE_TESTS ${CONNECTOR_LOAD_TESTS} test_database_boundary test_events
    test_fcgi_slowloris test_fcgi_connections test_fcgi_boundary test_log_flood test_nginx
    test_nginx_cache test_replica_lag test_replicas test_db_restart test_systemd test_worker_pool
    test_events_fault_domain test_request_cost test_events_publisher test_events_clients)
set(CONNECTOR_FAULT_TESTS test_faults test_db_restart test_database_boundary test_replicas
    test_replica_lag test_fleet_nodes test_fleet_primary test_events_publisher
    test_events_fault_domain test_nginx_cache)

file(GLOB CONNECTOR_INTEGRATION_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.py)
foreach(test_file IN LISTS CONNECTOR_INTEGRATION_TESTS)
  get_filename_component(test_name ${test_file} NAME_WE)
  if(CONNECTOR_SANITIZE AND test_name IN_LIST CONNECTOR_LOAD_TESTS)
    continue()
  endif()
  add_test(NAME integration.${test_name}
    COMMAND ${Python3_EXECUTABLE} -m unittest -v ${test_name}
    WORKING_DIRECTORY ${CMAKE_CURRENT_LIST_DIR})
  set(timeout 300)
  set(labels integration)
  if(test_name IN_LIST CONNECTOR_LOAD_TESTS)
    set(timeout 600)  # about 2 minutes each here; room for a loaded CI machine
    list(APPEND labels slow)
  endif()
  if(test_name IN_LIST CONNECTOR_FAULT_TESTS)
    list(APPEND labels fault)
  endif()
  set(alone FALSE)
  if(test_name IN_LIST CONNECTOR_EXCLUSIVE_TESTS)
    set(alone TRUE)
  endif()
  set_tests_properties(integration.${test_name} PROPERTIES
    ENVIRONMENT "${CONNECTOR_INTEGRATION_ENV}"
    TIMEOUT ${timeout}
    RUN_SERIAL ${alone}
    LABELS "${labels}")
endforeach()

if(NOT CONNECTOR_SANITIZE)
  add_test(NAME integration.memcheck
    COMMAND ${Python3_EXECUTABLE} memcheck.py
    WORKING_DIRECTORY ${CMAKE_CURRENT_LIST_DIR})
  set_tests_properties(integration.memcheck PROPERTIES
    ENVIRONMENT "${CONNECTOR_INTEGRATION_ENV}"
    TIMEOUT 600
    RUN_SERIAL TRUE
    LABELS "integration;slow")
endif()
# cpack's install step writes the tree's install_manifest.txt: one package at a time per tree.
# Both also run lintian or an overlay root beside another test: more time than the default.
foreach(test_name test_package test_install_docs)
  if(TEST integration.${test_name})
    set_tests_properties(integration.${test_name} PROPERTIES RESOURCE_LOCK cpack_build_tree
                                                             TIMEOUT 600)
  endif()
endforeach()
