#!/usr/bin/env bash
# with-gnome-keyring-locked.sh [--no-keyring] COMMAND [ARGS...]
#
# Runs COMMAND inside a private, throw-away D-Bus session whose Secret Service is
# gnome-keyring-daemon (Debian 12: 42.1) with its "login" collection LOCKED, on a
# private Xvfb display. gcr-prompter can be activated on this bus (its service files
# are copied in), so anything that asks gnome-keyring to unlock gets a real dialog on
# the display, and a dialog check can see it. HOME and the XDG directories point into a
# temporary directory that is removed afterwards.
#
# Set-up: gnome-keyring-daemon --foreground --unlock --components=secrets (password on
# stdin), one item stored with secret-tool so the login collection exists, then
# org.freedesktop.Secret.Service.Lock([the default collection]) (no prompt needed).
# With --no-keyring there is NO keyring at all: the daemon starts without --unlock, nothing
# is stored, the `default` alias names no collection, so a client that wants one asks
# gnome-keyring to create it and gets its "new keyring password" dialog (issue 34, case 14).
# GNOME_KEYRING_PASSWORD_FILE then holds a password to type into that dialog.
#
# Inside COMMAND:
#   LATCHKEY_TEST_SANDBOX          the temporary directory
#   GNOME_KEYRING_PASSWORD_FILE    the login keyring's password (0600, no newline, so that it
#                                  can be typed into the unlock dialog)
#   GNOME_KEYRING_PID_FILE         gnome-keyring-daemon's process id
#   DISPLAY                        the private Xvfb display
#   PATH starts with $LATCHKEY_TEST_SANDBOX/bin: keyring-lock, keyring-unlock (with the
#   password, through gnome-keyring's own D-Bus method, no prompt), keyring-windows.
set -euo pipefail
packages=(gnome-keyring gcr xvfb x11-utils dbus dbus-bin dbus-daemon python3-dbus libsecret-tools xdotool imagemagick)

if [ "${1:-}" != "--inside" ]; then
  if [ "${1:-}" = "--no-keyring" ]; then export GNOME_KEYRING_NO_KEYRING=1; shift; else unset GNOME_KEYRING_NO_KEYRING; fi
  [ $# -gt 0 ] || { sed -n '2,27p' "$0" >&2; exit 64; }
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  sandbox=$(mktemp -d /tmp/with-gkr-locked.XXXXXX)
  cleanup_outside() {
    if [ -f "$sandbox/pids" ]; then
      while read -r pid name; do
        [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = "$name" ] && kill -KILL "$pid" 2>/dev/null || true
      done < "$sandbox/pids"
    fi
    rm -rf "$sandbox"
  }
  trap cleanup_outside EXIT
  mkdir -p -m 700 "$sandbox/home" "$sandbox/data" "$sandbox/config" "$sandbox/cache" \
    "$sandbox/runtime" "$sandbox/services" "$sandbox/bin" "$sandbox/logs"
  cp /usr/share/dbus-1/services/org.gnome.keyring.SystemPrompter.service \
     /usr/share/dbus-1/services/org.gnome.keyring.PrivatePrompter.service "$sandbox/services/"
  . "$(dirname "$0")/private-bus.sh"
  write_private_bus_config "$sandbox"
  export HOME="$sandbox/home" XDG_DATA_HOME="$sandbox/data" XDG_CONFIG_HOME="$sandbox/config" \
         XDG_CACHE_HOME="$sandbox/cache" XDG_RUNTIME_DIR="$sandbox/runtime" LATCHKEY_TEST_SANDBOX="$sandbox"
  unset GNOME_KEYRING_CONTROL SSH_AUTH_SOCK DBUS_SESSION_BUS_ADDRESS DISPLAY WAYLAND_DISPLAY \
        LATCHKEY_APP LATCHKEY_HOME LATCHKEY_BACKEND LATCHKEY_POLICY
  set +e
  dbus-run-session --config-file="$sandbox/bus.conf" -- "$0" --inside "$@" 2> >(grep -v 'Failed to set fd limit' >&2)
  status=$?
  set -e
  exit $status
fi
shift
sandbox=$LATCHKEY_TEST_SANDBOX; logs=$sandbox/logs; bin=$sandbox/bin
umask 077
remember_pid() { echo "$1 $2" >> "$sandbox/pids"; }
stop_everything() {
  local pid name
  [ -f "$sandbox/pids" ] || return 0
  tac "$sandbox/pids" | while read -r pid name; do
    [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = "$name" ] || continue
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  return 0
}
trap 'stop_everything 2>/dev/null' EXIT

Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp -noreset </dev/null >"$logs/xvfb.log" 2>&1 3>"$sandbox/display" &
remember_pid $! Xvfb
for _ in $(seq 200); do [ -s "$sandbox/display" ] && break; sleep 0.05; done
export DISPLAY=":$(head -n1 "$sandbox/display")"
# so that gcr-prompter, when the bus activates it, opens its dialog on this display
dbus-update-activation-environment DISPLAY

head -c 24 /dev/urandom | base64 | tr -d "\n" > "$sandbox/keyring-password"
export GNOME_KEYRING_PASSWORD_FILE=$sandbox/keyring-password GNOME_KEYRING_PID_FILE=$sandbox/gnome-keyring.pid
if [ -n "${GNOME_KEYRING_NO_KEYRING:-}" ]; then
  gnome-keyring-daemon --foreground --components=secrets </dev/null > "$logs/gnome-keyring.log" 2>&1 &
else
  gnome-keyring-daemon --foreground --unlock --components=secrets < "$GNOME_KEYRING_PASSWORD_FILE" > "$logs/gnome-keyring.log" 2>&1 &
fi
echo $! > "$GNOME_KEYRING_PID_FILE"; remember_pid $! gnome-keyring-d
for _ in $(seq 200); do
  dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner \
    string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true' && break
  sleep 0.05
done
[ -n "${GNOME_KEYRING_NO_KEYRING:-}" ] || printf 'ready' | secret-tool store --label='harness probe' harness probe

cat > "$bin/keyring-lock" <<'EOF'
#!/usr/bin/python3
import dbus, sys
bus = dbus.SessionBus()
svc = dbus.Interface(bus.get_object('org.freedesktop.secrets', '/org/freedesktop/secrets'), 'org.freedesktop.Secret.Service')
path = svc.ReadAlias('default')
locked, prompt = svc.Lock([path])
props = dbus.Interface(bus.get_object('org.freedesktop.secrets', path), 'org.freedesktop.DBus.Properties')
sys.exit(0 if props.Get('org.freedesktop.Secret.Collection', 'Locked') else 1)
EOF
cat > "$bin/keyring-unlock" <<'EOF'
#!/usr/bin/python3
# gnome-keyring's own UnlockWithMasterPassword (org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface), plain session
import dbus, os, sys
bus = dbus.SessionBus()
svc_obj = bus.get_object('org.freedesktop.secrets', '/org/freedesktop/secrets')
svc = dbus.Interface(svc_obj, 'org.freedesktop.Secret.Service')
out, session = svc.OpenSession('plain', dbus.String('', variant_level=1))
path = svc.ReadAlias('default')
pw = open(os.environ['GNOME_KEYRING_PASSWORD_FILE'], 'rb').read()  # as --unlock read it from stdin, newline included
dbus.Interface(svc_obj, 'org.gnome.keyring.InternalUnsupportedGuiltRiddenInterface').UnlockWithMasterPassword(
    path, (session, dbus.ByteArray(b''), dbus.ByteArray(pw), 'text/plain'))
EOF
cat > "$bin/keyring-windows" <<EOF
#!/usr/bin/env bash
xwininfo -display "$DISPLAY" -root -children | grep -E '^ +0x' | sed 's/^ *//'
EOF
chmod 700 "$bin"/*
export PATH="$bin:$PATH"
[ -n "${GNOME_KEYRING_NO_KEYRING:-}" ] || keyring-lock || { echo "with-gnome-keyring-locked: could not lock the login collection" >&2; exit 1; }
set +e
"$@"
status=$?
set -e
exit $status
