# Sourced by with-kwallet.sh and with-gnome-keyring-locked.sh: the configuration of a
# private D-Bus session bus that listens in $1/runtime and starts services from $1/services
# only (so no desktop service of the host is activated), written to $1/bus.conf.
write_private_bus_config() {
  cat > "$1/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <keep_umask/>
  <listen>unix:dir=$1/runtime</listen>
  <auth>EXTERNAL</auth>
  <servicedir>$1/services</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOF
}
