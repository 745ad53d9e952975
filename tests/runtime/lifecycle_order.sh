#!/usr/bin/env bash
# runtime.c alone calls the modules' lifecycle hooks (td_*_runtime_init_, *_runtime_shutdown_,
# *_set_capacity_, td_async_set_all_capacities_): no module sets up, sizes or tears down
# another (issue 14). A definition of a module's own hook is not a call.
# usage: lifecycle_order.sh RUNTIME_SRC_DIR
src=$1
hooks='td_[a-z]+_(runtime_init|runtime_shutdown|runtime_start|set_capacity)_\(|td_async_set_all_capacities_\('
bad=$(cd "$src" && grep -nE "$hooks" -- *.c | grep -v '^runtime\.c:' |
      grep -vE '^[a-z_]+\.c:[0-9]+:(int|void) td_[a-z_]+\(' )
if [ -n "$bad" ]; then
  echo "lifecycle hooks called outside runtime.c:"
  echo "$bad"
  exit 1
fi
n=$(grep -oE 'td_[a-z]+_(runtime_init|runtime_shutdown|runtime_start|set_capacity)_|td_async_set_all_capacities_' "$src/runtime.c" | wc -l)
[ "$n" -ge 10 ] || { echo "runtime.c names only $n lifecycle hooks (expected its module tables)"; exit 1; }
echo "lifecycle order: only runtime.c calls the modules' hooks ($n references there)"
