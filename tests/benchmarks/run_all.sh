#!/bin/bash
# Every benchmark behind the README's performance tables, one after the other,
# minitf beside numpy, a raw socket and real TF (set MINITF_TF_PYTHON to a
# python with tensorflow, e.g. the one scripts/setup_tf_oracle.sh prints).
# Prints the time and the load average before each, since the machine's other
# work changes every figure: compare ratios within one run.
cd "$(dirname "$0")/../.."
for b in bench_blas bench_core bench_training bench_distributed bench_queues bench_fusion bench_cnn bench_rnn; do
  echo "### python tests/benchmarks/$b.py   ($(date +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))"
  python3 "tests/benchmarks/$b.py" 2>&1 | grep -v "^WARNING\|^I0000\|^W0000\|oneDNN\|cpu_feature_guard\|rebuild TensorFlow\|AVX"
done
