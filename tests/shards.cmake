# holdfast_add_test_shards(NAME name SHARDS n TIMEOUT s COST c LABELS l... [ENVIRONMENT e...]
#                          COMMAND cmd...)
#
# Registers name.1 ... name.n: the same GoogleTest binary (COMMAND, or a wrapper that runs it),
# each entry running one share of its tests through GoogleTest's sharding protocol
# (GTEST_TOTAL_SHARDS, GTEST_SHARD_INDEX: the i-th test runs in shard i mod n). A test added
# later lands in a shard by itself, so no entry creeps up to its time limit as the suite grows,
# and `ctest -j` runs the shares side by side. COST orders the run: ctest starts the costliest
# entries first, so that the longest ones do not start last and leave a core idle at the end.
function(holdfast_add_test_shards)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;SHARDS;TIMEOUT;COST" "LABELS;ENVIRONMENT;COMMAND")
  foreach(shard RANGE 1 ${arg_SHARDS})
    math(EXPR index "${shard} - 1")
    add_test(NAME ${arg_NAME}.${shard} COMMAND ${arg_COMMAND})
    set(env GTEST_TOTAL_SHARDS=${arg_SHARDS} GTEST_SHARD_INDEX=${index} ${arg_ENVIRONMENT})
    set_tests_properties(${arg_NAME}.${shard} PROPERTIES
      LABELS "${arg_LABELS}" TIMEOUT ${arg_TIMEOUT} COST ${arg_COST} ENVIRONMENT "${env}")
  endforeach()
endfunction()
