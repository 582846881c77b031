#!/usr/bin/env bash
# interop/with-kwallet.sh COMMAND [ARGS...]  (the project's copy of the shared harness; make interop-kwallet)
#
# Runs COMMAND inside a private, throw-away D-Bus session whose Secret Service
# (org.freedesktop.secrets) is KWallet 5's kwalletd5 (Debian 12: libkf5wallet-bin
# 5.103), headless on a private Xvfb display. Nothing of the user's own keyring,
# wallet, HOME or session bus is touched: HOME and the XDG directories point into a
# temporary directory that is removed afterwards, and the bus has no service files,
# so nothing but the kwalletd5 started here can own org.freedesktop.secrets
# (gnome-keyring is never activated behind its back).
#
# Example:
#   with-kwallet.sh bash -c 'printf tok | latchkey session put access && latchkey session get access'
#
# Environment (all optional):
#   KWALLET_WALLET  empty (default): the wallet "kdewallet" is created with an EMPTY
#                   password, so opening it needs no dialog;
#                   password: created with a random password (in $KWALLET_PASSWORD_FILE)
#                   and opened the way pam_kwallet5 opens it at login (pamOpen);
#                   none: no wallet at all (a first start before any wallet exists).
#   KWALLET_UNLOCK  1 (default): before COMMAND, the Secret Service collection is
#                   unlocked the way libsecret does it (Service.Unlock + Prompt.Prompt),
#                   which raises no dialog for an empty-password wallet or a wallet that
#                   is already open; 0: left as kwalletd5 starts it. NOTE: kwalletd5 5.103
#                   starts with its Secret Service collection Locked=true even when the
#                   wallet itself was opened through pamOpen (PAM login), and Latchkey
#                   never unlocks, so with KWALLET_UNLOCK=0 Latchkey gets exit 75.
#   KWALLET_KEEP    1: keep the sandbox directory (printed on standard error).
#
# Inside COMMAND:
#   LATCHKEY_TEST_SANDBOX   the temporary directory (HOME is $LATCHKEY_TEST_SANDBOX/home)
#   KWALLETD_PID_FILE       file holding kwalletd5's current process id
#   KWALLET_PASSWORD_FILE   the wallet's password (0600; empty for KWALLET_WALLET=empty)
#   DISPLAY                 the private Xvfb display
#   PATH                    starts with $LATCHKEY_TEST_SANDBOX/bin, holding:
#     kwallet-start               starts kwalletd5 and waits until that process owns
#                                 org.freedesktop.secrets and org.kde.kwalletd5
#     kwallet-owner NAME          the process id owning bus name NAME (exit 1: nobody)
#     kwallet-stop [SIGNAL]       sends SIGNAL (default TERM) to kwalletd5, waits for it to end
#     kwallet-restart [SIGNAL]    both
#     kwallet-unlock              Unlock + Prompt as libsecret does; exit 0 once Locked=false
#     kwallet-pamopen             opens the wallet the way pam_kwallet5 does (no dialog)
#     kwallet-sync-wait           sleeps 6 s: kwalletd5 writes the wallet file 5 s after
#                                 the last change (a kill before that loses the change)
#     kwallet-dump                every collection and item: label, attributes, locked
#     kwallet-windows             the top-level X windows (any dialog shows up here)
#
# Exit status: COMMAND's, or 1 when the set-up failed (its logs are printed).
set -euo pipefail

packages=(libkf5wallet-bin libqca-qt5-2-plugins xvfb x11-utils dbus dbus-bin dbus-daemon python3-dbus libsecret-tools)

if [ "${1:-}" != "--inside" ]; then
  [ $# -gt 0 ] || { sed -n '2,20p' "$0" >&2; exit 64; }
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "with-kwallet: installing ${missing[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  sandbox=$(mktemp -d /tmp/with-kwallet.XXXXXX)
  cleanup_outside() {
    # The inside stops what it started; this is the safety net, by recorded process id.
    if [ -f "$sandbox/pids" ]; then
      while read -r pid name; do
        [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = "$name" ] && kill -KILL "$pid" 2>/dev/null || true
      done < "$sandbox/pids"
    fi
    if [ "${KWALLET_KEEP:-0}" = 1 ]; then echo "with-kwallet: kept $sandbox" >&2; else rm -rf "$sandbox"; fi
  }
  trap cleanup_outside EXIT
  mkdir -p -m 700 "$sandbox/home" "$sandbox/data" "$sandbox/config" "$sandbox/cache" \
    "$sandbox/runtime" "$sandbox/services" "$sandbox/bin" "$sandbox/logs"
  . "$(dirname "$0")/private-bus.sh"
  write_private_bus_config "$sandbox"
  export HOME="$sandbox/home" XDG_DATA_HOME="$sandbox/data" XDG_CONFIG_HOME="$sandbox/config" \
         XDG_CACHE_HOME="$sandbox/cache" XDG_RUNTIME_DIR="$sandbox/runtime" \
         LATCHKEY_TEST_SANDBOX="$sandbox"
  unset GNOME_KEYRING_CONTROL SSH_AUTH_SOCK DBUS_SESSION_BUS_ADDRESS DISPLAY WAYLAND_DISPLAY \
        LATCHKEY_APP LATCHKEY_HOME LATCHKEY_BACKEND LATCHKEY_POLICY KDE_FULL_SESSION XDG_CURRENT_DESKTOP
  set +e
  dbus-run-session --config-file="$sandbox/bus.conf" -- "$0" --inside "$@" \
    2> >(grep -v 'Failed to set fd limit' >&2)
  status=$?
  set -e
  exit $status
fi
shift # --inside

# ---------------------------------------------------------------------------------
# Inside the private session.
# ---------------------------------------------------------------------------------
sandbox=$LATCHKEY_TEST_SANDBOX
logs=$sandbox/logs
bin=$sandbox/bin
umask 077
wallet_mode=${KWALLET_WALLET:-empty}

# "PID NAME" lines; a process is signalled only while /proc/PID/comm still says NAME
remember_pid() { echo "$1 $2" >> "$sandbox/pids"; }
stop_everything() {
  local pid name
  [ -f "$sandbox/pids" ] || return 0
  # newest first, so kwalletd5 ends while its display is still there
  tac "$sandbox/pids" | while read -r pid name; do
    [ "$(cat /proc/"$pid"/comm 2>/dev/null)" = "$name" ] || continue
    kill -CONT "$pid" 2>/dev/null || true
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  return 0
}
trap 'stop_everything 2>/dev/null' EXIT
fail_setup() {
  echo "with-kwallet: $*" >&2
  for f in "$logs"/*; do [ -s "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }; done
  exit 1
}

# --- Xvfb on a free display (it writes the display number to fd 3) -----------------
Xvfb -displayfd 3 -screen 0 1280x800x24 -nolisten tcp -noreset \
  </dev/null >"$logs/xvfb.log" 2>&1 3>"$sandbox/display" &
remember_pid $! Xvfb
for _ in $(seq 200); do [ -s "$sandbox/display" ] && break; sleep 0.05; done
display=$(head -n1 "$sandbox/display" 2>/dev/null || true)
[ -n "$display" ] || fail_setup "Xvfb did not start"
export DISPLAY=":$display"

# --- kwalletrc: Secret Service API on, no first-use wizard, no per-app prompt -----------
cat > "$XDG_CONFIG_HOME/kwalletrc" <<'EOF'
[Wallet]
Enabled=true
First Use=false
Default Wallet=kdewallet
Use One Wallet=true
Prompt on Open=false
Close When Idle=false
Leave Open=true
Launch Manager=false

[org.freedesktop.secrets]
apiEnabled=true
EOF
mkdir -p "$XDG_DATA_HOME/kwalletd"
password_file=$sandbox/wallet-password
case "$wallet_mode" in
  empty) : > "$password_file" ;;
  password) head -c 18 /dev/urandom | base64 | tr -d '\n' > "$password_file" ;;
  none) : > "$password_file" ;;
  *) fail_setup "KWALLET_WALLET must be empty, password or none (not '$wallet_mode')" ;;
esac
export KWALLET_PASSWORD_FILE=$password_file KWALLETD_PID_FILE=$sandbox/kwalletd.pid

# --- helpers ----------------------------------------------------------------------------
cat > "$bin/kwallet-owner" <<'EOF'
#!/usr/bin/env bash
# kwallet-owner NAME: the process id owning the bus name NAME, or nothing (exit 1) when nobody does
dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetConnectionUnixProcessID \
  string:"$1" 2>/dev/null | awk '/uint32/ { print $2; found = 1 } END { exit !found }'
EOF
cat > "$bin/kwallet-start" <<EOF
#!/usr/bin/env bash
# starts kwalletd5 and waits (at most 10 s) until this very process owns both
# org.freedesktop.secrets and org.kde.kwalletd5 (NameHasOwner alone would also be true for
# a previous kwalletd5 whose disconnection the bus has not processed yet)
DISPLAY=$DISPLAY kwalletd5 >>"$logs/kwalletd5.log" 2>&1 </dev/null &
pid=\$!
echo \$pid > "$sandbox/kwalletd.pid"; echo "\$pid kwalletd5" >> "$sandbox/pids"
for _ in \$(seq 200); do
  if [ "\$("$bin/kwallet-owner" org.freedesktop.secrets)" = "\$pid" ] \
     && [ "\$("$bin/kwallet-owner" org.kde.kwalletd5)" = "\$pid" ]; then exit 0; fi
  sleep 0.05
done
echo "kwallet-start: kwalletd5 (\$pid) did not take org.freedesktop.secrets and org.kde.kwalletd5" >&2; exit 1
EOF
cat > "$bin/kwallet-stop" <<EOF
#!/usr/bin/env bash
# kwallet-stop [SIGNAL]: signals kwalletd5 (default TERM) and waits (at most 5 s) for it to end
pid=\$(cat "$sandbox/kwalletd.pid" 2>/dev/null) || exit 0
kill -CONT "\$pid" 2>/dev/null || true
kill -"\${1:-TERM}" "\$pid" 2>/dev/null || exit 0
for _ in \$(seq 100); do
  # a killed child stays a zombie until reaped; count it as ended
  st=\$(ps -o stat= -p "\$pid" 2>/dev/null | cut -c1) || true
  { [ -z "\$st" ] || [ "\$st" = Z ]; } && break
  sleep 0.05
done
{ [ -z "\$st" ] || [ "\$st" = Z ]; } || { echo "kwallet-stop: kwalletd5 (\$pid) did not end" >&2; exit 1; }
# ended; wait until the bus has processed its disconnection and freed its names
for _ in \$(seq 100); do
  [ "\$("$bin/kwallet-owner" org.freedesktop.secrets)" != "\$pid" ] && exit 0
  sleep 0.05
done
echo "kwallet-stop: the bus still names kwalletd5 (\$pid) as the owner of org.freedesktop.secrets" >&2; exit 1
EOF
cat > "$bin/kwallet-restart" <<EOF
#!/usr/bin/env bash
"$bin/kwallet-stop" "\${1:-TERM}" && "$bin/kwallet-start"
EOF
cat > "$bin/kwallet-sync-wait" <<'EOF'
#!/usr/bin/env bash
sleep 6
EOF
cat > "$bin/kwallet-pamopen" <<'EOF'
#!/usr/bin/python3
# Opens (creating it when missing) the wallet "kdewallet" as pam_kwallet5 does at login:
# org.kde.KWallet.pamOpen with PBKDF2-SHA512(password, salt, 50000 rounds, 56 bytes),
# the salt from $XDG_DATA_HOME/kwalletd/kdewallet.salt (made here when missing). No dialog.
import dbus, hashlib, os, sys, time
d = os.path.join(os.environ['XDG_DATA_HOME'], 'kwalletd')
os.makedirs(d, mode=0o700, exist_ok=True)
salt_path = os.path.join(d, 'kdewallet.salt')
if not os.path.exists(salt_path) or os.path.getsize(salt_path) == 0:
    fd = os.open(salt_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, os.urandom(56)); os.close(fd)
salt = open(salt_path, 'rb').read()
password = open(os.environ['KWALLET_PASSWORD_FILE'], 'rb').read()
key = hashlib.pbkdf2_hmac('sha512', password, salt, 50000, 56)
bus = dbus.SessionBus()
obj = bus.get_object('org.kde.kwalletd5', '/modules/kwalletd5')
obj.pamOpen('kdewallet', dbus.ByteArray(key), dbus.Int32(0), dbus_interface='org.kde.KWallet', ignore_reply=True)
for _ in range(100):
    if obj.isOpen('kdewallet', dbus_interface='org.kde.KWallet', signature='s'):
        sys.exit(0)
    time.sleep(0.05)
print('kwallet-pamopen: kdewallet did not open', file=sys.stderr); sys.exit(1)
EOF
cat > "$bin/kwallet-unlock" <<'EOF'
#!/usr/bin/python3
# Unlocks the default collection as libsecret does (Service.Unlock, then Prompt.Prompt("")
# when a prompt comes back) and waits at most 5 s for Locked=false. Exit 0 unlocked, 1 not.
import dbus, sys, time
bus = dbus.SessionBus()
svc = dbus.Interface(bus.get_object('org.freedesktop.secrets', '/org/freedesktop/secrets'), 'org.freedesktop.Secret.Service')
path = svc.ReadAlias('default')
if str(path) == '/':
    print('kwallet-unlock: no default collection', file=sys.stderr); sys.exit(1)
props = dbus.Interface(bus.get_object('org.freedesktop.secrets', path), 'org.freedesktop.DBus.Properties')
unlocked, prompt = svc.Unlock([path])
if str(prompt) != '/':
    bus.get_object('org.freedesktop.secrets', prompt).Prompt('', dbus_interface='org.freedesktop.Secret.Prompt')
for _ in range(100):
    if not props.Get('org.freedesktop.Secret.Collection', 'Locked'):
        sys.exit(0)
    time.sleep(0.05)
print('kwallet-unlock: still locked', file=sys.stderr); sys.exit(1)
EOF
cat > "$bin/kwallet-dump" <<'EOF'
#!/usr/bin/python3
# Every collection and item on the Secret Service: label, attributes, locked (no secrets).
import dbus
bus = dbus.SessionBus()
props = dbus.Interface(bus.get_object('org.freedesktop.secrets', '/org/freedesktop/secrets'), 'org.freedesktop.DBus.Properties')
for cpath in props.Get('org.freedesktop.Secret.Service', 'Collections'):
    cp = dbus.Interface(bus.get_object('org.freedesktop.secrets', cpath), 'org.freedesktop.DBus.Properties')
    c = cp.GetAll('org.freedesktop.Secret.Collection')
    print('collection %s label=%r locked=%s items=%d' % (cpath, str(c['Label']), bool(c['Locked']), len(c['Items'])))
    for ipath in c['Items']:
        ip = dbus.Interface(bus.get_object('org.freedesktop.secrets', ipath), 'org.freedesktop.DBus.Properties')
        i = ip.GetAll('org.freedesktop.Secret.Item')
        print('  item %s label=%r locked=%s attrs=%s' % (ipath, str(i['Label']), bool(i['Locked']),
              {str(k): str(v) for k, v in i['Attributes'].items()}))
EOF
cat > "$bin/kwallet-windows" <<EOF
#!/usr/bin/env bash
# top-level windows on the private display; kwalletd5 always has one invisible 3x3
# "Qt Selection Owner for kwalletd5"; anything else is a dialog or a window
xwininfo -display "$DISPLAY" -root -children | grep -E '^ +0x' | sed 's/^ *//'
EOF
chmod 700 "$bin"/*
export PATH="$bin:$PATH"

# --- kwalletd5 and the wallet --------------------------------------------------------------
kwallet-start || fail_setup "kwalletd5 did not start"
if [ "$wallet_mode" != none ]; then
  # pamOpen creates the wallet file, but kwalletd5 builds its Secret Service collections
  # only at start-up (pamOpen emits no walletCreated), so restart it once.
  kwallet-pamopen || fail_setup "could not create the wallet"
  kwallet-restart TERM || fail_setup "kwalletd5 did not restart"
  [ "$wallet_mode" = password ] && { kwallet-pamopen || fail_setup "could not open the wallet"; }
  if [ "${KWALLET_UNLOCK:-1}" = 1 ]; then
    kwallet-unlock || fail_setup "could not unlock the Secret Service collection"
  fi
fi

set +e
"$@"
status=$?
set -e
exit $status
