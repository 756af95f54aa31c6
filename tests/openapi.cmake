# docs/openapi.yaml: the lint (Redocly CLI with tools/openapi/redocly.yaml, every rule an error)
# and the tests of the response validator the integration tests run at each stack's stop. The
# npm packages come from tools/openapi/install (scripts/install-deps runs it).
find_program(CONNECTOR_NODE node)
set(CONNECTOR_OPENAPI_TOOLS ${PROJECT_SOURCE_DIR}/tools/openapi)
if(NOT CONNECTOR_NODE)
  message(WARNING "node not found: the openapi.* tests fail until scripts/install-deps has run")
  set(CONNECTOR_NODE node)
endif()

add_test(NAME openapi.lint
  COMMAND ${CONNECTOR_NODE} ${CONNECTOR_OPENAPI_TOOLS}/node_modules/@redocly/cli/bin/cli.js
          lint --config ${CONNECTOR_OPENAPI_TOOLS}/redocly.yaml
          ${PROJECT_SOURCE_DIR}/docs/openapi.yaml
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
add_test(NAME openapi.validator
  COMMAND ${CONNECTOR_NODE} --test ${CONNECTOR_OPENAPI_TOOLS}/validator.test.mjs
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
# No telemetry or update checks from the linter: nothing but the lint itself.
set_tests_properties(openapi.lint PROPERTIES
  ENVIRONMENT "REDOCLY_TELEMETRY=off;REDOCLY_SUPPRESS_UPDATE_NOTICE=true"
  TIMEOUT 120
  LABELS openapi)
set_tests_properties(openapi.validator PROPERTIES TIMEOUT 120 LABELS openapi)
