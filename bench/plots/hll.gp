# SPDX-License-Identifier: BSD-3-Clause
# hll.gp: plots of bench/hll_characterize's CSV files (docs/data/hll_p*.csv).
#   gnuplot -e "data='docs/data'; img='docs/img'" bench/plots/hll.gp
# Writes img/hll_error_bands.png (quantiles of the relative error against n,
# one panel per precision, with the theoretical +-1, 2, 3 sigma lines,
# sigma = 1.04/sqrt(m)), img/hll_bias.png and img/hll_rmse.png.
if (!exists("data")) data = 'docs/data'
if (!exists("img")) img = 'docs/img'
if (!exists("precisions")) precisions = "10 12 14 16"

set datafile separator ','
set datafile missing 'NaN'
set logscale x
set format x '10^{%L}'
set terminal pngcairo size 1200,900 font 'sans,10' enhanced
set grid xtics ytics lc rgb '#dddddd'
set xrange [1:5e9]
file(p) = sprintf('%s/hll_p%s.csv', data, p)

# ---- quantile bands -------------------------------------------------------
set output img.'/hll_error_bands.png'
set multiplot layout 2,2 title 'HyperLogLog relative error (estimate - n)/n against n: quantiles over the trials of each point' font 'sans,12'
do for [p in precisions] {
    s = 1.0389618114391 / sqrt(2**int(p))
    set title sprintf('p = %s (m = %d): 1.04/sqrt(m) = %.3f%%', p, 2**int(p), 100*s)
    set xlabel 'distinct items n'
    set ylabel 'relative error (%)'
    set yrange [-3.6*100*s:3.6*100*s]
    set key bottom left font 'sans,8' opaque
    plot file(p) using 3:(100*$12):(100*$18) every ::1 with filledcurves lc rgb '#c6dbef' title '0.135% .. 99.865%', \
         ''      using 3:(100*$13):(100*$17) every ::1 with filledcurves lc rgb '#6baed6' title '2.275% .. 97.725%', \
         ''      using 3:(100*$14):(100*$16) every ::1 with filledcurves lc rgb '#2171b5' title '15.87% .. 84.13%', \
         ''      using 3:(100*$15) every ::1 with lines lw 2 lc rgb 'black' title 'median', \
         for [k=1:3] 100*k*s with lines dt 2 lc rgb '#d62728' title (k == 1 ? '±1, 2, 3 × 1.04/sqrt(m)' : ''), \
         for [k=1:3] -100*k*s with lines dt 2 lc rgb '#d62728' notitle
}
unset multiplot

# ---- bias -----------------------------------------------------------------
set output img.'/hll_bias.png'
set terminal pngcairo size 1000,600 font 'sans,10' enhanced
set title 'HyperLogLog relative bias (mean of (estimate - n)/n) with ±2 standard errors'
set xlabel 'distinct items n'
set ylabel 'bias (% of n)'
set yrange [*:*]
set key top right
set bars small
plot for [i=1:words(precisions)] file(word(precisions,i)) using 3:(100*$7):(200*$8) every ::1 \
         with yerrorlines pt 7 ps 0.5 lc i title sprintf('p = %s', word(precisions,i)), \
     0 with lines lc rgb 'black' notitle

# ---- RMSE against theory --------------------------------------------------
set output img.'/hll_rmse.png'
set title 'HyperLogLog RMSE of the relative error, in units of 1.04/sqrt(m)'
set ylabel 'RMSE / (1.04/sqrt(m))'
set yrange [0:1.3]
set key bottom right
plot for [i=1:words(precisions)] file(word(precisions,i)) using 3:10 every ::1 \
         with linespoints pt 7 ps 0.5 lc i title sprintf('p = %s', word(precisions,i)), \
     1 with lines dt 2 lc rgb 'black' title 'theory for large n'
