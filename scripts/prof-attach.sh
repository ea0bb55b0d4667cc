# prof-run --pid: attaching to a running process, sourced by prof-run
# (docs/attach.md). gdb, in batch mode, loads the agent into the process
# (dlopen) and calls prof_attach_start() with the settings, which rewrites
# the allocator's GOT entries and starts the CPU sampler; at the end it
# calls prof_attach_stop(), which writes those entries back, finishes the
# streams and leaves no clock, handler or thread behind. Each refusal is one line and exit code 2, the
# process untouched.
#
# Uses from prof-run: pid, duration, agent, env_args, outdir, die.

safe_point_script=$(dirname "${BASH_SOURCE[0]}")/prof-attach-safe-point.py

# The process's command name, and checks that need no ptrace.
attach_checks() {
  case "$pid" in ''|*[!0-9]*|0) die "--pid $pid: expected a process id" ;; esac
  [ "$pid" != $$ ] || die "--pid $pid is prof-run itself"
  [ -d "/proc/$pid" ] || die "no process $pid"
  comm=$(cat "/proc/$pid/comm" 2>/dev/null) || die "no process $pid"
  command -v gdb >/dev/null || die "attaching needs gdb (apt-get install gdb)"
  local exe
  exe=$(readlink -f "/proc/$pid/exe" 2>/dev/null) ||
    die "cannot read /proc/$pid/exe: process $pid is not ours to trace (another user's? run as root)"
  [ -r "/proc/$pid/exe" ] && [ -r "/proc/$pid/maps" ] ||
    die "cannot read process $pid's memory map: it is not ours to trace (another user's? run as root)"
  if [ -f "$exe" ] && [ "$(head -c 4 -- "$exe" | od -An -c | tr -d ' ')" = 177ELF ] && ! has_interp "$exe"; then
    die "process $pid ($exe) is statically linked: it has no dynamic loader to load the agent"
  fi
  if grep -q '/libprof\(-cpu\)\?\.so' "/proc/$pid/maps" && ! grep -qF "$agent" "/proc/$pid/maps"; then
    local other
    other=$(grep -o '/[^ ]*/libprof[^ ]*\.so' "/proc/$pid/maps" | head -n 1)
    die "process $pid has another libprof loaded, $other: profiled already, or attached before with that build (PROF_AGENT=$other picks it)"
  fi
  local tracer
  tracer=$(tracer_of "$pid")
  [ "${tracer:-0}" = 0 ] ||
    die "process $pid is being traced by process $tracer ($(cat "/proc/$tracer/comm" 2>/dev/null)): one debugger at a time"
  case "$agent" in *[\"\\]*) die "cannot attach $agent: a path with a quote or a backslash" ;; esac
}

# gdb attached to the process for the commands given, as little as it can:
# no init files, no debuginfod, its own output on stdout; in a session of
# its own, so that a Ctrl-C meant for prof-run never cuts a call short.
# Each call it makes waits for a safe point (prof-attach-safe-point.py).
gdb_in_target() {
  LC_ALL=C setsid -w timeout 120 gdb -nx -q -batch -p "$pid" -iex 'set debuginfod enabled off' \
    -iex 'set auto-load no' -ex 'set confirm off' -x "$safe_point_script" "$@" 2>&1 </dev/null
}

# One line saying why gdb could not attach or call, from its output $1.
gdb_refusal() {
  case "$1" in
    *"ptrace: Operation not permitted"*)
      local scope
      scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
      if [ "$scope" -ge 1 ] && [ "$(id -u)" -ne 0 ]; then
        echo "process $pid may not be traced: /proc/sys/kernel/yama/ptrace_scope is $scope (run as root, or set it to 0)"
      else
        echo "process $pid may not be traced (another user's, or a setuid program: run as root)"
      fi ;;
    *"No such process"*|*"exited"*|*"not being run"*|*"No process"*)
      echo "process $pid ended while it was being attached" ;;
    *"No symbol \"dlopen\""*|*"No symbol table"*)
      echo "process $pid has no dlopen to load the agent (a static program?)" ;;
    *) echo "gdb could not load the agent into process $pid: $(grep -v '^\[' <<<"$1" | grep -v '^$' | tail -n 1)" ;;
  esac
}

# The pid of the process tracing process $1 (0: none).
tracer_of() { awk '/^TracerPid:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# Milliseconds in a --duration value (30s, 500ms, 2m, 1h; a bare number: seconds).
duration_ms() {
  local v=$1
  case "$v" in
    *[0-9]ms) v=${v%ms}; [[ $v =~ ^[0-9]+$ ]] && echo "$v" && return ;;
    *[0-9]s) v=${v%s}; [[ $v =~ ^[0-9]+$ ]] && echo $((v * 1000)) && return ;;
    *[0-9]m) v=${v%m}; [[ $v =~ ^[0-9]+$ ]] && echo $((v * 60000)) && return ;;
    *[0-9]h) v=${v%h}; [[ $v =~ ^[0-9]+$ ]] && echo $((v * 3600000)) && return ;;
    *) [[ $v =~ ^[0-9]+$ ]] && echo $((v * 1000)) && return ;;
  esac
  return 1
}

# Attaches, records until the duration, Ctrl-C, SIGTERM or the end of the
# process, detaches; rc is 0 when a profile was recorded.
attach_and_record() {
  local limit_ms="" settings out code started stopped why
  exec 3>&2
  if [ -n "$duration" ]; then
    limit_ms=$(duration_ms "$duration") || die "--duration $duration: expected a time such as 30s, 500ms or 2m"
  fi
  # The process writes the files: it needs a folder it may write to.
  [ "$(id -u)" -ne 0 ] || chown "$(stat -c %u:%g "/proc/$pid")" "$outdir" 2>/dev/null
  settings="PROF_OUTPUT=${outdir//%/%%}/prof.%e.%p"
  for a in "${env_args[@]}"; do settings+="\\n$a"; done
  case "$settings" in *[\"]*) die "cannot pass a setting with a double quote to the process" ;; esac
  local load=()
  grep -qF "$agent" "/proc/$pid/maps" 2>/dev/null ||
    load=(-ex "printf \"prof-attach-dlopen %p\\n\", (void *)dlopen(\"$agent\", 2)")
  started=$(now_ms)
  out=$(gdb_in_target -ex prof-safe-point "${load[@]}" \
    -ex "printf \"prof-attach-start %d\\n\", ((int (*)(const char *))prof_attach_start)(\"$settings\")" \
    -ex "printf \"prof-attach-error %s\\n\", ((const char *(*)(void))prof_attach_error)()" \
    -ex "printf \"prof-attach-lua %s\\n\", ((const char *(*)(void))prof_attach_lua_status)()" \
    -ex detach)
  if [[ $out == *"prof-attach-dlopen 0x0"* ]]; then
    die "process $pid could not load $agent (its user must be able to read it; the dynamic loader said: $(
      gdb_in_target -ex prof-safe-point -ex 'printf "%s\n", (char *)dlerror()' -ex detach | tail -n 1))"
  fi
  code=$(sed -n 's/^prof-attach-start \([0-9]*\)$/\1/p' <<<"$out")
  why=$(sed -n 's/^prof-attach-error //p' <<<"$out")
  case "$code" in
    0) ;;
    1) die "process $pid is profiled already (the agent came with the program: LD_PRELOAD)" ;;
    2) die "process $pid is being profiled already (attached by another prof-run)" ;;
    3) die "process $pid runs a setuid/setgid program: the agent stays inert there" ;;
    4) die "$why" ;;
    5) die "the agent could not start in process $pid: $why" ;;
    6) die "the agent could not record memory in process $pid: $why" ;;
    *) kill -0 "$pid" 2>/dev/null || die "process $pid ended while it was being attached"
       die "$(gdb_refusal "$out")" ;;
  esac
  echo "prof-run: attached to process $pid ($comm) in $(($(now_ms) - started)) ms;" \
       "recording${duration:+ for $duration}, until Ctrl-C${duration:+ at most}" >&3
  local lua
  lua=$(sed -n 's/^prof-attach-lua //p' <<<"$out")
  case "$lua" in ''|'no Lua in the process') ;; *) echo "prof-run: Lua: $lua" >&3 ;; esac
  local stop=0 recording
  recording=$(now_ms)
  trap 'stop=1' INT TERM
  while [ $stop = 0 ] && kill -0 "$pid" 2>/dev/null; do
    [ -n "$limit_ms" ] && [ $(($(now_ms) - recording)) -ge "$limit_ms" ] && break
    sleep 0.05
  done
  trap '' INT TERM  # (the stop is not to be interrupted)
  rc=0
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "prof-run: process $pid ended while recording; its profile ends there" >&3
    return
  fi
  # A debugger (another prof-run asking) may trace it for a moment: gdb
  # could not attach before it leaves.
  local waited
  for ((waited = 0; waited < 600; waited++)); do
    [ "$(tracer_of "$pid")" = 0 ] && break
    sleep 0.1
  done
  stopped=$(now_ms)
  # XXX: gdb may have stopped the thread it calls on inside the agent's
  # signal handler, where the stop cannot wait for itself (it answers 2):
  # the handler's frame is let return (finish), and the stop asked again.
  # Under gdb a signal is held by gdb and given to the process as it
  # resumes: a sample's signal held so would come after the disposition is
  # the program's again (SIGPROF's default ends the process): gdb drops it.
  local script
  script=$(mktemp)
  cat > "$script" <<'GDB'
handle SIGPROF nostop noprint nopass
prof-safe-point
set $prof_stop = ((int (*)(void))prof_attach_stop)()
set $prof_tries = 0
while $prof_stop == 2 && $prof_tries < 20
  frame function prof_attach_signal_handler
  finish
  set $prof_stop = ((int (*)(void))prof_attach_stop)()
  set $prof_tries = $prof_tries + 1
end
printf "prof-attach-stop %d\n", $prof_stop
GDB
  out=$(gdb_in_target -x "$script" -ex detach)
  rm -f "$script"
  if [[ $out == *"prof-attach-stop 0"* ]]; then
    echo "prof-run: detached from process $pid in $(($(now_ms) - stopped)) ms" >&3
  elif ! kill -0 "$pid" 2>/dev/null; then
    echo "prof-run: process $pid ended while detaching" >&3
  else
    echo "prof-run: gdb could not stop the recording in process $pid ($(grep -v '^\[' <<<"$out" | grep -v '^$' | tail -n 1)); it goes on until the process ends" >&3
    rc=1
  fi
}
