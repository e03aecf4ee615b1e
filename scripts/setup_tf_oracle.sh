#!/usr/bin/env bash
# Make (or reuse) a separate venv with real TensorFlow, the conformance oracle,
# and print the path of its python on stdout (everything else goes to stderr):
#
#   export MINITF_TF_PYTHON="$(scripts/setup_tf_oracle.sh)"
#
# Where:    ${MINITF_TF_VENV:-$HOME/.cache/minitf/tf-venv}
# What:     ${MINITF_TF_SPEC:-tensorflow-cpu==2.21.*}  (the goldens under
#           tests/conformance/programs were recorded with TF 2.21), and beside
#           it ${MINITF_TF_KERAS_SPEC:-tf_keras==2.21.*}: TF 2.21's tf.layers and
#           tf.nn.rnn_cell exist only with Keras 2, selected by
#           TF_USE_LEGACY_KERAS=1 (the conformance harness sets it); and
#           ${MINITF_TF_LESSON_SPEC:-portpicker ipython matplotlib}: what the lessons need
#           on real TF (tf.test.create_local_cluster imports portpicker; the
#           lessons-on-TF test runs their cells in IPython, and they draw with matplotlib).
# Python:   ${MINITF_TF_BASE_PYTHON:-python3}, which must be one TF supports.
#
# Quick when the venv already imports tensorflow; rebuilt when it is broken.
# Exits non-zero, loudly, when it cannot produce a working TensorFlow.
set -euo pipefail

venv="${MINITF_TF_VENV:-$HOME/.cache/minitf/tf-venv}"
spec="${MINITF_TF_SPEC:-tensorflow-cpu==2.21.*}"
keras_spec="${MINITF_TF_KERAS_SPEC:-tf_keras==2.21.*}"
read -r -a lesson_spec <<< "${MINITF_TF_LESSON_SPEC:-portpicker ipython matplotlib}"
base_python="${MINITF_TF_BASE_PYTHON:-python3}"
py="$venv/bin/python"

log() { echo "setup_tf_oracle: $*" >&2; }

created=""
fail() {
    # Leave no half-built venv behind: the conformance tests would find it
    # at the default path and try to use it.
    [ -n "$created" ] && rm -rf "$venv"
    {
        echo
        echo "############################################################"
        echo "# setup_tf_oracle: FAILED: $*"
        echo "# No real TensorFlow oracle at $venv."
        echo "############################################################"
        echo
    } >&2
    exit 1
}

works() {
    [ -x "$py" ] && TF_CPP_MIN_LOG_LEVEL=3 "$py" -c "import tensorflow" >/dev/null 2>&1
}

has_keras2() {
    # tf.layers must resolve through tf_keras, as the harness runs the oracle.
    TF_USE_LEGACY_KERAS=1 TF_CPP_MIN_LOG_LEVEL=3 "$py" -c \
        "import tf_keras, tensorflow.compat.v1 as tf; tf.layers.dense" >/dev/null 2>&1
}

has_lesson_extras() {
    TF_CPP_MIN_LOG_LEVEL=3 "$py" -c "import portpicker, IPython, matplotlib" >/dev/null 2>&1
}

if works; then
    if ! has_lesson_extras; then
        log "adding ${lesson_spec[*]} to $venv"
        "$py" -m pip install --quiet --disable-pip-version-check "${lesson_spec[@]}" >&2 \
            || fail "pip could not install '${lesson_spec[*]}' beside TensorFlow"
    fi
    if ! has_keras2; then
        log "adding $keras_spec to $venv"
        "$py" -m pip install --quiet --disable-pip-version-check "$keras_spec" >&2 \
            || fail "pip could not install '$keras_spec' beside TensorFlow"
        has_keras2 || fail "tf_keras was installed but tf.layers does not resolve through it"
    fi
    log "reusing $venv"
    echo "$py"
    exit 0
fi

if [ -e "$venv" ]; then
    # Only ever delete something that is clearly a venv.
    [ -f "$venv/pyvenv.cfg" ] || fail "$venv exists and is not a venv; not touching it"
    log "$venv exists but cannot import tensorflow: rebuilding it"
    rm -rf "$venv"
fi

command -v "$base_python" >/dev/null 2>&1 || fail "no base python '$base_python'"
log "creating $venv with $("$base_python" --version 2>&1) and installing $spec (a few minutes)"
mkdir -p "$(dirname "$venv")"
created=1
"$base_python" -m venv "$venv" >&2 || fail "could not create the venv (python3-venv missing?)"
"$py" -m pip install --quiet --disable-pip-version-check --upgrade pip >&2 \
    || fail "could not upgrade pip in the venv"
"$py" -m pip install --quiet --disable-pip-version-check "$spec" "$keras_spec" "${lesson_spec[@]}" >&2 \
    || fail "pip could not install '$spec', '$keras_spec' and '${lesson_spec[*]}' (no network, or no wheel for this python?)"
works || fail "tensorflow was installed but does not import"
has_lesson_extras || fail "portpicker, IPython and matplotlib were installed but do not import"
has_keras2 || fail "tf_keras was installed but tf.layers does not resolve through it"

log "ready: $("$py" -c 'import os; os.environ["TF_CPP_MIN_LOG_LEVEL"]="3"; import tensorflow as tf; print("tensorflow", tf.__version__)' 2>/dev/null)"
echo "$py"
