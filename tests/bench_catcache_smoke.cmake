# Runs `keel bench catcache --quick` and checks its JSON: every timing a
# {median, min, max, rounds} of positive numbers, the on/off time ratios
# finite and sane with ci_low <= ratio <= ci_high, the bloat runs' bytes
# positive with pruning keeping the cache within its memory target + 10%,
# the memory blocks and resident memory of each run read,
# the cache's counters consistent, and the hot set's hit ratios within
# [0, 1].
include(${CMAKE_CURRENT_LIST_DIR}/bench_json.cmake)
execute_process(
  COMMAND ${KEEL} bench catcache --quick --json ${OUT}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "keel bench catcache failed (${rc}):\n${out}\n${err}")
endif()
file(READ ${OUT} json)

# Fails unless field is present in json; its value goes into var.
function(keel_json_get json field var)
  string(JSON v ERROR_VARIABLE jerr GET "${json}" ${field})
  if(jerr)
    message(FATAL_ERROR "bench JSON lacks ${field}: ${jerr}")
  endif()
  set(${var} "${v}" PARENT_SCOPE)
endfunction()

keel_json_get("${json}" pairs pairs)
keel_check_bench_stats("${json}" ${pairs}
  hit1_ns hit3_ns negative_hit_ns
  hit1_ns_pruning_off hit3_ns_pruning_off negative_hit_ns_pruning_off)

foreach(r prune_time hit1 hit3 negative_hit)
  keel_json_get("${json}" ${r}_ratio v)
  keel_json_get("${json}" ${r}_ratio_ci_low lo)
  keel_json_get("${json}" ${r}_ratio_ci_high hi)
  if(NOT v GREATER 0.2 OR NOT v LESS 5)
    message(FATAL_ERROR "bench JSON ${r}_ratio out of range: ${v}")
  endif()
  if(lo GREATER v OR v GREATER hi)
    message(FATAL_ERROR
      "bench JSON ${r}_ratio: not ci_low ${lo} <= ${v} <= ci_high ${hi}")
  endif()
endforeach()

# Each run's memory blocks, and the process's resident memory before and
# after it (read from /proc/self/statm).
foreach(f bloat_bytes_pruning_off bloat_bytes_pruning_on bloat_bytes_age_only
          memory_target_bytes bloat_peak_bytes_pruning_off
          bloat_peak_bytes_pruning_on bloat_peak_bytes_age_only
          bloat_block_bytes_pruning_off bloat_block_bytes_pruning_on
          bloat_block_bytes_age_only bloat_rss_before_pruning_off
          bloat_rss_after_pruning_off bloat_rss_before_pruning_on
          bloat_rss_after_pruning_on)
  keel_json_get("${json}" ${f} v)
  if(NOT v GREATER 0)
    message(FATAL_ERROR "bench JSON ${f} is not positive: ${v}")
  endif()
endforeach()
keel_json_get("${json}" bloat_bytes_pruning_on on)
keel_json_get("${json}" memory_target_bytes target)
math(EXPR limit "${target} + ${target} / 10")
if(on GREATER limit)
  message(FATAL_ERROR "with pruning the cache holds ${on} bytes, over its "
                      "target ${target} + 10%")
endif()

# The growth is after less before, or 0 where resident memory shrank.
foreach(run pruning_off pruning_on age_only)
  keel_json_get("${json}" bloat_rss_before_${run} before)
  keel_json_get("${json}" bloat_rss_after_${run} after)
  keel_json_get("${json}" bloat_rss_growth_${run} growth)
  set(want 0)
  if(after GREATER before)
    math(EXPR want "${after} - ${before}")
  endif()
  if(NOT growth EQUAL want)
    message(FATAL_ERROR "bench JSON bloat_rss_growth_${run} is ${growth}, "
                        "resident ${before} before and ${after} after")
  endif()
endforeach()

# The hot hit ratios are read off the cache's counters, which must add up.
foreach(f bloat_counter_mismatches_pruning_off
          bloat_counter_mismatches_pruning_on bloat_counter_mismatches_age_only)
  keel_json_get("${json}" ${f} v)
  if(NOT v EQUAL 0)
    message(FATAL_ERROR "bench JSON ${f} is ${v}: the cache's hit and miss "
                        "counters do not add up to the lookups made")
  endif()
endforeach()

foreach(f hot_hit_ratio_pruning_off hot_hit_ratio_pruning_on
          hot_hit_ratio_age_only)
  keel_json_get("${json}" ${f} v)
  if(v LESS 0 OR v GREATER 1)
    message(FATAL_ERROR "bench JSON ${f} is not within [0, 1]: ${v}")
  endif()
endforeach()

keel_check_bad_usage(${KEEL} bench catcache --rounds)
keel_check_bad_usage(${KEEL} bench catcache --rounds 1)
keel_check_bad_usage(${KEEL} bench catcache --prune maybe)
keel_check_bad_usage(${KEEL} bench catcache --names 12.5)
message(STATUS "bench catcache smoke: ok")
