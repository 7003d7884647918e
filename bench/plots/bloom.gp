# SPDX-License-Identifier: BSD-3-Clause
# bloom.gp: plots of bench/bloom_characterize's CSV files (docs/data/bloom_*.csv).
#   gnuplot -e "data='docs/data'; img='docs/img'" bench/plots/bloom.gp
# Writes img/bloom_fpr.png (measured and theoretical false-positive rate
# against bits per item, per layout), img/bloom_memory.png (bits per item
# against the requested rate, against log2(1/p) and 1.44 log2(1/p)) and
# img/bloom_scalable.png (measured rate of scalable filters as they grow,
# over the requested rate).
if (!exists("data")) data = 'docs/data'
if (!exists("img")) img = 'docs/img'

set datafile separator ','
set terminal pngcairo size 1000,650 font 'sans,10' enhanced
set grid xtics ytics mxtics mytics lc rgb '#dddddd', lc rgb '#f0f0f0'
is(col, name) = strcol(col) eq name

# ---- rate against bits per item -------------------------------------------
set output img.'/bloom_fpr.png'
set title 'Bloom filter false-positive rate at n items against bits per item (m/n), best integer k'
set xlabel 'bits per item'
set ylabel 'false-positive rate'
set logscale y
set format y '10^{%L}'
set xrange [3.5:24.5]
set key top right
f = data.'/bloom_fpr.csv'
plot f using 2:(is(1,'blocked') ? $9 : NaN) every ::1 with lines lw 2 lc rgb '#1f77b4' title 'blocked: theory (exact)', \
     f using 2:(is(1,'blocked') ? $8 : NaN):(is(1,'blocked') ? 3*$10 : NaN) every ::1 with yerrorbars pt 7 ps 0.8 lc rgb '#1f77b4' title 'blocked: measured, ±3 sigma', \
     f using 2:(is(1,'classic') ? $9 : NaN) every ::1 with lines lw 2 lc rgb '#d62728' title 'classic: theory', \
     f using 2:(is(1,'classic') ? $8 : NaN):(is(1,'classic') ? 3*$10 : NaN) every ::1 with yerrorbars pt 5 ps 0.7 lc rgb '#d62728' title 'classic: measured, ±3 sigma', \
     f using 2:(is(1,'blocked') ? 0.5**($2*log(2)) : NaN) every ::1 with lines dt 2 lc rgb 'gray40' title 'optimum with real k: 0.6185^{m/n}'

# ---- memory against the rate ----------------------------------------------
set output img.'/bloom_memory.png'
set title 'Bits per item for a requested false-positive rate p (sk\_bloom\_new at 10^6 items)'
set xlabel 'requested false-positive rate p'
set ylabel 'bits per item'
unset logscale y
set format y '%g'
set logscale x
set format x '10^{%L}'
set xrange [2e-1:5e-7]
set autoscale y
set key top left
g = data.'/bloom_memory.csv'
plot g using 3:(is(1,'blocked') ? $7 : NaN) every ::1 with linespoints pt 7 lw 2 lc rgb '#1f77b4' title 'blocked', \
     g using 3:(is(1,'classic') ? $7 : NaN) every ::1 with linespoints pt 5 lw 2 lc rgb '#d62728' title 'classic', \
     g using 3:(is(1,'auto') ? $7 : NaN) every ::1 with points pt 6 ps 2 lc rgb '#2ca02c' title 'auto (its choice)', \
     g using 3:(is(1,'classic') ? $12 : NaN) every ::1 with lines dt 3 lw 3 lc rgb 'black' title '1.44 log_2(1/p) (classic, real k)', \
     g using 3:(is(1,'classic') ? $11 : NaN) every ::1 with lines lw 2 lc rgb 'black' title 'lower bound log_2(1/p)'

# ---- scalable filters -----------------------------------------------------
set output img.'/bloom_scalable.png'
set title 'Scalable filters (expansion 2): measured rate over the requested p as they grow'
set xlabel 'items added / initial capacity'
set ylabel 'measured rate / requested p'
set logscale x 2
set format x '%g'
set xrange [0.4:80]
set yrange [0:1.1]
set key bottom right
h = data.'/bloom_scalable.csv'
rates = "0.1 0.01 0.001"
plot for [i=1:3] h using 6:(is(1,'blocked') && strcol(2) eq word(rates,i) ? $16 : NaN) every ::1 with linespoints pt 7 lw 2 lc i title 'blocked, p = '.word(rates,i), \
     for [i=1:3] h using 6:(is(1,'classic') && strcol(2) eq word(rates,i) ? $16 : NaN) every ::1 with linespoints pt 5 dt 2 lw 2 lc i title 'classic, p = '.word(rates,i), \
     1 with lines lc rgb 'black' title 'requested'
