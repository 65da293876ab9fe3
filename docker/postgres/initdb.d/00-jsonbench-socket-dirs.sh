#!/usr/bin/env bash
# Sourced by docker-entrypoint.sh once, right after initdb: serve the unix socket in /var/run/postgresql
# (where the official image's server puts it and its clients look) as well as in /tmp (these builds'
# compiled-in default). Harmless to keep when /docker-entrypoint-initdb.d is replaced by a mount.
echo "unix_socket_directories = '/var/run/postgresql,/tmp'  # jsonbench image: both socket folders" >> "$PGDATA/postgresql.conf"
