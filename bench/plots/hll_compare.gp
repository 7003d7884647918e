# SPDX-License-Identifier: BSD-3-Clause
# hll_compare.gp: plot of bench/compare_bench's TSV file (docs/data/hll_compare.tsv).
#   gnuplot -e "data='docs/data'; img='docs/img'" bench/plots/hll_compare.gp
# Writes img/hll_compare_rmse.png: the RMSE of |A n B| over the size of the
# union against the Jaccard index, sk_hll_compare's joint estimate (solid)
# against inclusion-exclusion (dashed), one line pair per set size
# (|A| = |B|), one panel per precision.
if (!exists("data")) data = 'docs/data'
if (!exists("img")) img = 'docs/img'
if (!exists("precisions")) precisions = "12 14 16"
sizes = "1000 10000 100000 1000000 10000000"
size_name(i) = sprintf('10^{%d}', i + 2)

set datafile separator '\t'
set datafile missing 'NaN'
set terminal pngcairo size 1500,560 font 'sans,10' enhanced
set output img.'/hll_compare_rmse.png'
set grid xtics ytics mxtics mytics lc rgb '#dddddd', lc rgb '#f0f0f0'
set logscale xy
set format x '%g'
set format y '10^{%L}'
set xrange [0.0008:1.25]
set yrange [4e-4:3e-2]
set xlabel 'Jaccard index J = |A ∩ B| / |A ∪ B|'
f = data.'/hll_compare.tsv'
# Rows of precision p and |A| = |B| = n; column col over the union (column 6).
sel(p, n, col) = (int($1) == p && $2 == n && $3 == n) ? column(col) / $6 : NaN

set multiplot layout 1,words(precisions) title 'RMSE of |A ∩ B| relative to |A ∪ B|, |A| = |B|: joint estimate (sk\_hll\_compare, solid) against inclusion–exclusion |A| + |B| − |A ∪ B| (dashed)' font 'sans,12'
do for [k=1:words(precisions)] {
    p = int(word(precisions, k))
    set title sprintf('p = %d (m = %d)', p, 2**p)
    if (k == 1) { set ylabel 'RMSE / |A ∪ B|' } else { unset ylabel }
    set key bottom right maxrows 5 font 'sans,8' opaque
    plot for [i=1:words(sizes)] f using 4:(sel(p, real(word(sizes, i)), 9)) every ::1 \
             with linespoints pt 7 ps 0.6 lw 2 lc i title 'joint, n = '.size_name(i), \
         for [i=1:words(sizes)] f using 4:(sel(p, real(word(sizes, i)), 10)) every ::1 \
             with linespoints pt 6 ps 0.6 lw 1.5 dt 2 lc i title 'IE, n = '.size_name(i)
}
unset multiplot
