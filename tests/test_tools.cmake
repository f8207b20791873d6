# What the tests need beyond the build packages: GoogleTest and the programs they run. Included
# by the top-level CMakeLists.txt only when HOLDFAST_TESTS is on, so that configuring and
# building the server needs none of it (scripts/check-build-deps.sh checks that). Every missing
# piece is reported at once, with the Debian package that brings it; `make test` installs them
# all first (scripts/install-deps.sh test).

set(HOLDFAST_MISSING_TEST_TOOLS "")

find_package(GTest QUIET)
if(NOT GTest_FOUND)
  list(APPEND HOLDFAST_MISSING_TEST_TOOLS "GoogleTest (libgtest-dev)")
endif()

# Finds the program `name` into the cache variable `var`, or notes it as missing with the
# package that brings it. Extra arguments are folders to look in besides PATH.
function(holdfast_test_program var name package)
  find_program(${var} NAMES ${name} PATHS ${ARGN})
  if(NOT ${var})
    list(APPEND HOLDFAST_MISSING_TEST_TOOLS "${name} (${package})")
    set(HOLDFAST_MISSING_TEST_TOOLS "${HOLDFAST_MISSING_TEST_TOOLS}" PARENT_SCOPE)
  endif()
endfunction()

holdfast_test_program(REDIS_CLI redis-cli redis-tools)
holdfast_test_program(HOLDFAST_REDIS_SERVER redis-server redis-server)
holdfast_test_program(HOLDFAST_CURL curl curl)
holdfast_test_program(HOLDFAST_OPENSSL openssl openssl)
holdfast_test_program(HOLDFAST_PYTHON3 python3 python3)
holdfast_test_program(HOLDFAST_ETCD etcd etcd-server)
holdfast_test_program(HOLDFAST_GNUPLOT gnuplot gnuplot-nox)
# The package's test (tests/package): cpack's Debian generator, then the installed package.
holdfast_test_program(HOLDFAST_DPKG_SHLIBDEPS dpkg-shlibdeps dpkg-dev)
holdfast_test_program(HOLDFAST_FILE file file)
holdfast_test_program(HOLDFAST_SYSTEMD_ANALYZE systemd-analyze systemd)
holdfast_test_program(HOLDFAST_MAN man man-db)
holdfast_test_program(HOLDFAST_ZSH zsh zsh)
holdfast_test_program(HOLDFAST_TMUX tmux tmux)
# scripts/start-postgres.sh and start-mariadb.sh look in the same places.
file(GLOB holdfast_pg_bindirs /usr/lib/postgresql/*/bin)
holdfast_test_program(HOLDFAST_INITDB initdb postgresql ${holdfast_pg_bindirs})
holdfast_test_program(HOLDFAST_MARIADBD mariadbd mariadb-server /usr/sbin)

if(HOLDFAST_MISSING_TEST_TOOLS)
  list(JOIN HOLDFAST_MISSING_TEST_TOOLS ", " missing)
  message(FATAL_ERROR
    "The tests need what is not installed: ${missing} (Debian packages in parentheses). "
    "Install them with scripts/install-deps.sh test (`make test` does), "
    "or configure with -DHOLDFAST_TESTS=OFF to build without the tests.")
endif()
