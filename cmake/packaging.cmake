# Install rules and the Debian package (CPack, generator DEB) of the UNIT connector query service.
#
#   scripts/package                      # Release build in build-package/, .deb into build/
#   cpack -G DEB --config <builddir>/CPackConfig.cmake
#
# The package is laid out for Debian 12 (the prefix is /usr):
#   /usr/bin/connector-worker, /usr/bin/connector-admin       the programs, and
#   /usr/bin/connector-webhooks                                the webhook deliverer
#   /usr/sbin/connector-migrate, /usr/sbin/connector-db-accounts  schema and database accounts
#   /lib/systemd/system/connector-worker.{socket,service}      the units (not enabled, not started),
#   /lib/systemd/system/connector-{events,webhooks}.service    and the optional ones'
#   /etc/connector/connector.conf                              conffile, 0640 root:connector
#   /etc/connector/connector.env                               conffile, 0600 root:root (secrets)
#   /etc/connector/webhooks.env                                conffile, 0600 root:root (the
#                                                              webhook deliverer's password)
#   /usr/share/connector/nginx/                                nginx drop-ins to include
#   /usr/share/connector/sql/, /usr/share/connector/scripts/   schema, accounts templates, scripts
#   /usr/share/doc/unit-connector/                             README and docs
#   /usr/share/connector/docs-site/                            the API reference page (nginx's
#                                                              /docs/ and /v1/openapi.json)
# The maintainer scripts are in cmake/debian/; postinst creates the system user `connector`.
# The absolute destinations (/etc, /lib) can be moved for a local `cmake --install` with
# -DCONNECTOR_SYSCONF_DIR=... and -DCONNECTOR_SYSTEMD_UNIT_DIR=....

# `cmake --install` and cpack package what is already built and never build anything first:
# scripts/package builds the two programs, and the package test in ctest packages the very
# binaries the other tests just ran (a rebuild in the middle of a test run is never wanted).
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

set(CONNECTOR_SYSCONF_DIR "/etc/connector" CACHE PATH "Where the config and env files go")
set(CONNECTOR_SYSTEMD_UNIT_DIR "/lib/systemd/system" CACHE PATH "Where the systemd units go")
set(CONNECTOR_PACKAGE_NAME "unit-connector")
set(CONNECTOR_SHARE_DIR "share/connector")
set(CONNECTOR_DOC_DIR "share/doc/${CONNECTOR_PACKAGE_NAME}")
set(CONNECTOR_MAINTAINER "UNIT connector maintainers <connector@unit.invalid>")
# The Debian revision: raise it (-DCONNECTOR_DEBIAN_RELEASE=2) for a new package of the same
# upstream version; a new version is project(... VERSION ...) in CMakeLists.txt.
set(CONNECTOR_DEBIAN_RELEASE 1 CACHE STRING "Debian revision of the package (the -N of VERSION-N)")

# --- install rules ---------------------------------------------------------------------------

# The API reference page: scripts/docs-site's folder (Redoc and docs/openapi.yaml as JSON),
# built into the build tree by the docs-site target, which needs node and tools/openapi's npm
# packages (tools/openapi/install; scripts/install-deps runs it). Without them the target and
# the folder are left out, and nginx's /docs/ answers 404.
find_program(CONNECTOR_DOCS_NODE node)
if(EXISTS "${CONNECTOR_DOCS_NODE}" AND EXISTS ${PROJECT_SOURCE_DIR}/tools/openapi/node_modules/redoc)
  set(CONNECTOR_DOCS_SITE ${CMAKE_CURRENT_BINARY_DIR}/docs-site)
  add_custom_command(OUTPUT ${CONNECTOR_DOCS_SITE}/index.html
    COMMAND ${CONNECTOR_DOCS_NODE} ${PROJECT_SOURCE_DIR}/tools/openapi/build-docs-site.mjs
            ${PROJECT_SOURCE_DIR}/docs/openapi.yaml ${CONNECTOR_DOCS_SITE}
    DEPENDS ${PROJECT_SOURCE_DIR}/docs/openapi.yaml
            ${PROJECT_SOURCE_DIR}/tools/openapi/build-docs-site.mjs
            ${PROJECT_SOURCE_DIR}/tools/openapi/openapi-document.mjs
            ${PROJECT_SOURCE_DIR}/tools/openapi/docs-page.html
            ${PROJECT_SOURCE_DIR}/tools/openapi/package-lock.json
    COMMENT "API reference page (docs-site/)")
  add_custom_target(docs-site ALL DEPENDS ${CONNECTOR_DOCS_SITE}/index.html)
  install(DIRECTORY ${CONNECTOR_DOCS_SITE}/ DESTINATION ${CONNECTOR_SHARE_DIR}/docs-site
    FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
    PATTERN ".*" EXCLUDE)
else()
  # connector.conf includes connector-docs.conf, which serves this folder: a package without it
  # would answer /docs/ and /v1/openapi.json with 404. So installing or packaging such a tree
  # fails, loudly, before anything is copied (scripts/package installs the npm packages first).
  message(STATUS "node or tools/openapi/node_modules missing: no docs-site target, and "
                 "`cmake --install` and cpack fail (run scripts/install-deps, then configure again)")
  install(CODE [[message(FATAL_ERROR "The API reference page (docs-site) is not built: node or tools/openapi/node_modules was missing when this tree was configured. Run tools/openapi/install (or scripts/install-deps), then configure again.")]])
endif()

install(TARGETS connector-worker connector-admin connector-webhooks RUNTIME DESTINATION bin)

install(FILES
  ${PROJECT_SOURCE_DIR}/systemd/connector-worker.socket
  ${PROJECT_SOURCE_DIR}/systemd/connector-worker.service
  ${PROJECT_SOURCE_DIR}/systemd/connector-events.service
  ${PROJECT_SOURCE_DIR}/systemd/connector-webhooks.service
  DESTINATION ${CONNECTOR_SYSTEMD_UNIT_DIR}
  PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

# The group (connector) is set by postinst: it does not exist when the package is built.
install(FILES ${PROJECT_SOURCE_DIR}/fcgi/connector.conf.example
  DESTINATION ${CONNECTOR_SYSCONF_DIR} RENAME connector.conf
  PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ)
install(FILES ${PROJECT_SOURCE_DIR}/cmake/debian/connector.env
  ${PROJECT_SOURCE_DIR}/cmake/debian/webhooks.env
  DESTINATION ${CONNECTOR_SYSCONF_DIR}
  PERMISSIONS OWNER_READ OWNER_WRITE)

# Every nginx file but the template the demo and the tests render, and the events nginx's own
# configuration, which its unit (connector-events.service) reads from /etc/connector.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/nginx/ DESTINATION ${CONNECTOR_SHARE_DIR}/nginx
  FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
  PATTERN "local.conf.in" EXCLUDE
  PATTERN "connector-events-nginx.conf" EXCLUDE)
install(FILES ${PROJECT_SOURCE_DIR}/nginx/connector-events-nginx.conf
  DESTINATION ${CONNECTOR_SYSCONF_DIR}
  PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

# The Prometheus alerting rules (docs/operations-fleet.md, monitoring).
install(FILES ${PROJECT_SOURCE_DIR}/monitoring/connector.rules.yml
  DESTINATION ${CONNECTOR_SHARE_DIR}/monitoring
  PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

# The ops scripts find their SQL as ../sql/ from their own directory, so scripts/ and sql/ keep
# their repository layout under /usr/share/connector, and /usr/sbin/connector-<name> runs
# /usr/share/connector/scripts/<name> (a wrapper, not a symlink: the scripts locate themselves
# by $0). migrate applies sql/migrations; db-accounts creates the least-privilege accounts.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/sql/ DESTINATION ${CONNECTOR_SHARE_DIR}/sql
  FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
foreach(script migrate db-accounts)
  if(NOT EXISTS ${PROJECT_SOURCE_DIR}/scripts/${script})
    continue()
  endif()
  install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/${script} DESTINATION ${CONNECTOR_SHARE_DIR}/scripts)
  file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/package/connector-${script} CONTENT
"#!/bin/sh
# Runs <prefix>/${CONNECTOR_SHARE_DIR}/scripts/${script} of the UNIT connector query service
# (its options are at its top). Run it as root on the database host: it connects as the MariaDB
# account of the OS user over the unix socket, e.g. --socket /run/mysqld/mysqld.sock
set -e
prefix=$(cd \"$(dirname \"$(readlink -f \"$0\")\")/..\" && pwd)
exec \"$prefix/${CONNECTOR_SHARE_DIR}/scripts/${script}\" \"$@\"
" @ONLY)
  install(PROGRAMS ${CMAKE_CURRENT_BINARY_DIR}/package/connector-${script} DESTINATION sbin)
endforeach()

install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/cmake/debian/copyright
  ${CMAKE_CURRENT_BINARY_DIR}/package/changelog.Debian.gz
  DESTINATION ${CONNECTOR_DOC_DIR}
  PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
# connector-admin's config for loading data with the database's admin account.
install(FILES ${PROJECT_SOURCE_DIR}/src/admin/admin.conf.example DESTINATION ${CONNECTOR_SHARE_DIR}
  PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CONNECTOR_DOC_DIR}/docs
  FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
  FILES_MATCHING PATTERN "*.md")


# Debian's changelog of the package (policy 12.7; lintian): one entry for this version, dated
# SOURCE_DATE_EPOCH when the caller sets it (reproducible builds), else by the commit the tree
# is built from, else (no git) the configure time; gzip -9n as policy asks.
if(DEFINED ENV{SOURCE_DATE_EPOCH})
  string(TIMESTAMP CONNECTOR_CHANGELOG_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
else()
  execute_process(COMMAND git log -1 --format=%ct WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    OUTPUT_VARIABLE CONNECTOR_SOURCE_EPOCH OUTPUT_STRIP_TRAILING_WHITESPACE
    ERROR_VARIABLE CONNECTOR_GIT_ERROR)
  if(CONNECTOR_SOURCE_EPOCH MATCHES "^[0-9]+$")
    set(ENV{SOURCE_DATE_EPOCH} ${CONNECTOR_SOURCE_EPOCH})
  else()
    message(WARNING "changelog.Debian dated now: no commit time from git (${CONNECTOR_GIT_ERROR})")
  endif()
  string(TIMESTAMP CONNECTOR_CHANGELOG_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)
  unset(ENV{SOURCE_DATE_EPOCH})
endif()
file(CONFIGURE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/package/changelog.Debian CONTENT
"${CONNECTOR_PACKAGE_NAME} (${PROJECT_VERSION}-${CONNECTOR_DEBIAN_RELEASE}) unstable; urgency=medium

  * Release ${PROJECT_VERSION} of the UNIT connector query service, packaged
    with CPack by scripts/package (what changed: the project's git history).

 -- ${CONNECTOR_MAINTAINER}  ${CONNECTOR_CHANGELOG_DATE}
")
execute_process(COMMAND gzip -9nf ${CMAKE_CURRENT_BINARY_DIR}/package/changelog.Debian
  COMMAND_ERROR_IS_FATAL ANY)

# --- the Debian package ----------------------------------------------------------------------

set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "${CONNECTOR_PACKAGE_NAME}")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_VENDOR "UNIT connector project")
set(CPACK_PACKAGE_CONTACT "${CONNECTOR_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "UNIT connector query service (FastCGI workers for nginx)")
# Lines under 80 characters (Debian policy 3.4.1; lintian).
set(CPACK_PACKAGE_DESCRIPTION
"The read-only HTTP API of the UNIT cross-chain connector: networks, pairs,
fees and limits, deposit addresses, transfer history and supply per chain.
nginx passes /v1 requests over FastCGI to connector-worker, a pool of
processes and threads managed by systemd that reads MariaDB. Ships the
worker, connector-admin (data import), systemd units with socket activation,
nginx include files, the database schema and its migration script.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${CONNECTOR_DEBIAN_RELEASE})
set(CPACK_DEBIAN_PACKAGE_SECTION "net")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://unit.invalid/connector")
# Shared-library dependencies come from dpkg-shlibdeps and are appended to these.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libfcgi with Debian's fix of CVE-2025-23016 (the worker screens every request before libfcgi
# reads it anyway: fcgi/request_screen.h).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, libfcgi0ldbl (>= 2.4.2-2+deb12u1)")
# Users bring their own nginx (and database); the package works with any of them. nchan holds
# the subscribers of the optional live events, in an nginx of its own (connector-events.service,
# nginx/connector-events-nginx.conf, docs/events.md); the API's nginx needs no module.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
    "nginx | nginx-light | nginx-full | nginx-extras, mariadb-client, libnginx-mod-nchan")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "mariadb-server")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# Owner and group of every file in the archive are root:root; postinst sets the config's group.

set(CONNECTOR_DEBIAN_DIR ${CMAKE_CURRENT_BINARY_DIR}/package/debian)
file(CONFIGURE OUTPUT ${CONNECTOR_DEBIAN_DIR}/conffiles CONTENT
"${CONNECTOR_SYSCONF_DIR}/connector.conf
${CONNECTOR_SYSCONF_DIR}/connector.env
${CONNECTOR_SYSCONF_DIR}/webhooks.env
${CONNECTOR_SYSCONF_DIR}/connector-events-nginx.conf
")
foreach(script postinst prerm postrm)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/debian/${script} ${CONNECTOR_DEBIAN_DIR}/${script}
    @ONLY FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
    WORLD_READ WORLD_EXECUTE)
endforeach()
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${CONNECTOR_DEBIAN_DIR}/conffiles
  ${CONNECTOR_DEBIAN_DIR}/postinst
  ${CONNECTOR_DEBIAN_DIR}/prerm
  ${CONNECTOR_DEBIAN_DIR}/postrm)

include(CPack)
