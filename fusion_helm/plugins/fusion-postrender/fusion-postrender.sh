#!/bin/sh
# Runs the fusion-postrender console script of the installed fusioninfer-helm package.
#
# Helm 4 keeps a post-renderer plugin's standard error to itself: it shows only that the plugin "exited
# with error". What the post-renderer says there (the one line naming why it refused, or a warning) is
# handed on to helm's own standard error where that is a terminal or a pipe (Linux: /proc/$PPID/fd/2,
# appended to), else to the terminal. Helm's standard error redirected to a regular file is left alone:
# a second writer there would overwrite helm's own message, which goes at helm's offset.
said=$(mktemp "${TMPDIR:-/tmp}/fusion-postrender.XXXXXX") || exit 1
trap 'rm -f "$said"' EXIT
# It hands its warnings on itself: the post-renderer need not reach for the terminal.
FUSION_POSTRENDER_STDERR_HANDED_ON=1 "${FUSION_POSTRENDER:-fusion-postrender}" "$@" 2>"$said"
status=$?
if [ -s "$said" ]; then
    helm_stderr=/proc/$PPID/fd/2
    if [ -e "$helm_stderr" ] && [ ! -f "$helm_stderr" ] && { cat "$said" >>"$helm_stderr"; } 2>/dev/null; then
        :
    elif { cat "$said" >/dev/tty; } 2>/dev/null; then
        :
    else
        cat "$said" >&2  # Helm 3 runs no plugin of this type; any other host may show it
    fi
fi
exit "$status"
