# Integration tests: every tests/integration/test_*.py is one ctest entry, integration.<name>,
# that drives the real stack (private MariaDB, connector-worker, nginx) through harness.py with
# the binaries of this build tree. They share loopback ports and CPU, so they run one at a time.
find_package(Python3 REQUIRED COMPONENTS Interpreter)

file(GLOB CONNECTOR_INTEGRATION_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/test_*.py)
foreach(test_file IN LISTS CONNECTOR_INTEGRATION_TESTS)
  get_filename_component(test_name ${test_file} NAME_WE)
  add_test(NAME integration.${test_name}
    COMMAND ${Python3_EXECUTABLE} -m unittest -v ${test_name}
    WORKING_DIRECTORY ${CMAKE_CURRENT_LIST_DIR})
  set_tests_properties(integration.${test_name} PROPERTIES
    ENVIRONMENT "CONNECTOR_BUILD_DIR=${CMAKE_BINARY_DIR};CONNECTOR_REPO=${PROJECT_SOURCE_DIR};PYTHONDONTWRITEBYTECODE=1"
    TIMEOUT 300
    RUN_SERIAL TRUE)
endforeach()
