# SPDX-License-Identifier: BSD-3-Clause
# Finds the PostgreSQL 15 server headers for the extension in postgres/ and
# defines the option SKETCH_POSTGRES: ON by default when they are there.
#
# SKETCH_PG_CONFIG is the pg_config of that server: Debian's
# /usr/lib/postgresql/15/bin/pg_config first, since /usr/bin/pg_config
# (postgresql-common) answers for the newest server-dev package installed,
# which may be another major version; then any pg_config on PATH. An
# extension is built for one major version: its headers and its
# PG_MODULE_MAGIC must be those of the server that loads it.
#
# Sets, from pg_config: SKETCH_PG_INCLUDEDIR_SERVER, SKETCH_PG_BINDIR (the
# server the tests start) and, as cache variables a packager may override,
# SKETCH_PG_PKGLIBDIR and SKETCH_PG_SHAREDIR (where `cmake --install
# --component postgres` puts sketch.so and extension/sketch.*).
set(SKETCH_PG_MAJOR 15)
find_program(SKETCH_PG_CONFIG pg_config PATHS /usr/lib/postgresql/${SKETCH_PG_MAJOR}/bin
             NO_DEFAULT_PATH)
if(NOT SKETCH_PG_CONFIG)
  find_program(SKETCH_PG_CONFIG pg_config)
endif()

set(sketch_pg_missing "")
if(NOT SKETCH_PG_CONFIG)
  set(sketch_pg_missing "no pg_config (apt-get install postgresql-server-dev-${SKETCH_PG_MAJOR})")
else()
  foreach(what version includedir-server pkglibdir sharedir bindir)
    execute_process(COMMAND ${SKETCH_PG_CONFIG} --${what} OUTPUT_VARIABLE value
                    OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      set(sketch_pg_missing "${SKETCH_PG_CONFIG} --${what} failed")
      break()
    endif()
    string(TOUPPER "${what}" key)
    string(REPLACE "-" "_" key "${key}")
    set(sketch_pg_${key} "${value}")
  endforeach()
  if(NOT sketch_pg_missing)
    if(NOT sketch_pg_VERSION MATCHES "^PostgreSQL ${SKETCH_PG_MAJOR}[.]")
      set(sketch_pg_missing "${SKETCH_PG_CONFIG} is ${sketch_pg_VERSION}, not ${SKETCH_PG_MAJOR}")
    elseif(NOT EXISTS "${sketch_pg_INCLUDEDIR_SERVER}/postgres.h")
      set(sketch_pg_missing "no postgres.h in ${sketch_pg_INCLUDEDIR_SERVER} (apt-get install postgresql-server-dev-${SKETCH_PG_MAJOR})")
    endif()
  endif()
endif()

if(sketch_pg_missing)
  set(sketch_pg_default OFF)
else()
  set(sketch_pg_default ON)
endif()
option(SKETCH_POSTGRES "Build the PostgreSQL ${SKETCH_PG_MAJOR} extension (postgres/)"
       ${sketch_pg_default})
if(SKETCH_POSTGRES AND sketch_pg_missing)
  message(FATAL_ERROR "SKETCH_POSTGRES is ON but ${sketch_pg_missing}")
elseif(NOT SKETCH_POSTGRES)
  if(sketch_pg_missing)
    sketch_left_out("PostgreSQL extension" "${sketch_pg_missing}")
  else()
    sketch_left_out("PostgreSQL extension" "SKETCH_POSTGRES=OFF")
  endif()
else()
  set(SKETCH_PG_INCLUDEDIR_SERVER "${sketch_pg_INCLUDEDIR_SERVER}")
  set(SKETCH_PG_BINDIR "${sketch_pg_BINDIR}")
  set(SKETCH_PG_PKGLIBDIR "${sketch_pg_PKGLIBDIR}" CACHE PATH
      "Where the PostgreSQL extension's sketch.so is installed (pg_config --pkglibdir)")
  set(SKETCH_PG_SHAREDIR "${sketch_pg_SHAREDIR}" CACHE PATH
      "PostgreSQL's share directory, whose extension/ gets sketch.control (pg_config --sharedir)")
  sketch_part("PostgreSQL extension (${sketch_pg_VERSION})")
endif()
