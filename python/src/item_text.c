/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * item_text.c: the bytes a Python object stands for as an item, the same
 * bytes everywhere in sketch. A str is its UTF-8 and a bytes-like object
 * its bytes; a number or a bool is its text as PostgreSQL's output
 * functions print it, which is what the PostgreSQL extension hashes for a
 * column of that type (docs/postgres.md): an int its decimal digits, a
 * float float8out's shortest round-trip digits (fixed notation for decimal
 * exponents -4 to 14, else d.ddde+XX with at least two exponent digits;
 * "NaN", "Infinity", "-Infinity", "-0"), a bool "t" or "f".
 */
#include "common.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t skpy_format_u64(uint64_t v, char *out)
{
    char digits[20];
    size_t n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        out[i] = digits[n - 1 - i];
    return n;
}

size_t skpy_format_i64(int64_t v, char *out)
{
    if (v >= 0)
        return skpy_format_u64((uint64_t)v, out);
    out[0] = '-';
    return 1 + skpy_format_u64(-(uint64_t)v, out + 1);
}

/* Lays out shortest digits (no leading or trailing zeros) whose first digit
 * stands for 10^exponent as float8out does. */
static size_t layout_pg(int negative, const char *digits, size_t count, int exponent, char *out)
{
    size_t n = 0;
    if (negative)
        out[n++] = '-';
    if (exponent >= -4 && exponent < 15) {
        if (exponent < 0) {
            out[n++] = '0';
            out[n++] = '.';
            for (int i = -1; i > exponent; i--)
                out[n++] = '0';
            memcpy(out + n, digits, count);
            return n + count;
        }
        size_t whole = (size_t)exponent + 1;
        for (size_t i = 0; i < whole; i++)
            out[n++] = i < count ? digits[i] : '0';
        if (count > whole) {
            out[n++] = '.';
            memcpy(out + n, digits + whole, count - whole);
            n += count - whole;
        }
        return n;
    }
    out[n++] = digits[0];
    if (count > 1) {
        out[n++] = '.';
        memcpy(out + n, digits + 1, count - 1);
        n += count - 1;
    }
    out[n++] = 'e';
    out[n++] = exponent < 0 ? '-' : '+';
    unsigned magnitude = (unsigned)(exponent < 0 ? -exponent : exponent);
    if (magnitude < 10)
        out[n++] = '0';
    return n + skpy_format_u64(magnitude, out + n);
}

/* The significant digits of a decimal text (Python's repr or %e: no
 * sign), without leading or trailing zeros, and the power of ten of the
 * first. */
static size_t parse_digits(const char *text, char *digits, int *exponent)
{
    size_t count = 0;
    int point = -1, seen_nonzero = 0, leading_zeros = 0;
    const char *p = text;
    for (; *p && *p != 'e'; p++) {
        if (*p == '.') {
            point = (int)(p - text) - leading_zeros;
            continue;
        }
        if (*p == '0' && !seen_nonzero) {
            leading_zeros++;
            continue;
        }
        seen_nonzero = 1;
        if (count < 24)
            digits[count++] = *p;
    }
    /* Digits before the point, less the leading zeros skipped. */
    int before = point >= 0 ? point : (int)(p - text) - leading_zeros;
    *exponent = *p == 'e' ? (int)strtol(p + 1, NULL, 10) : 0;
    if (before <= 0 && point >= 0) {
        /* 0.000123: the zeros after the point lower the exponent. */
        int zeros_after_point = 0;
        for (const char *q = strchr(text, '.') + 1; *q == '0'; q++)
            zeros_after_point++;
        *exponent += -zeros_after_point - 1;
    } else {
        *exponent += before - 1;
    }
    while (count > 1 && digits[count - 1] == '0')
        count--;
    return count;
}

/* Whether text equals (a + b) / 2 exactly, in Python's exact fractions;
 * -1 with an exception. */
static int equals_midpoint(const char *text, double a, double b)
{
    PyObject *fractions = PyImport_ImportModule("fractions");
    PyObject *fraction = fractions ? PyObject_GetAttrString(fractions, "Fraction") : NULL;
    Py_XDECREF(fractions);
    if (!fraction)
        return -1;
    PyObject *t = PyObject_CallFunction(fraction, "s", text);
    PyObject *fa = PyObject_CallFunction(fraction, "d", a);
    PyObject *fb = PyObject_CallFunction(fraction, "d", b);
    PyObject *sum = fa && fb ? PyNumber_Add(fa, fb) : NULL;
    PyObject *two = PyLong_FromLong(2);
    PyObject *mid = sum && two ? PyNumber_TrueDivide(sum, two) : NULL;
    int equal = t && mid ? PyObject_RichCompareBool(t, mid, Py_EQ) : -1;
    Py_XDECREF(t);
    Py_XDECREF(fa);
    Py_XDECREF(fb);
    Py_XDECREF(sum);
    Py_XDECREF(two);
    Py_XDECREF(mid);
    Py_DECREF(fraction);
    return equal;
}

/* Whether text, which reads back as v (positive), lies exactly halfway
 * between v and a neighbour: a long double holds such a midpoint exactly,
 * and strtold lands on it only for a text equal to it or close to it,
 * which exact fractions then tell apart (a few in 10^4 doubles). */
static int on_boundary(double v, const char *text)
{
    long double t = strtold(text, NULL);
    double neighbours[2] = {nextafter(v, -INFINITY), nextafter(v, INFINITY)};
    for (int i = 0; i < 2; i++) {
        if (isinf(neighbours[i]))
            continue;
        long double mid = ((long double)v + (long double)neighbours[i]) / 2;
        if (t == mid)
            return equals_midpoint(text, v, neighbours[i]);
    }
    return 0;
}

/* The digits float8out prints: the shortest that read back as v, the
 * nearest to v among them, and (unlike Python's repr, which accepts them
 * for an even significand) never one halfway to a neighbouring double. */
static size_t shortest_digits_c(double v, char *digits, int *exponent)
{
    char *repr = PyOS_double_to_string(v, 'r', 0, 0, NULL);
    if (!repr) {
        PyErr_Clear();
        return 0;
    }
    char text[40];
    int boundary = on_boundary(v, repr), usable = boundary == 0;
    if (usable)
        snprintf(text, sizeof text, "%s", repr);
    PyMem_Free(repr);
    if (boundary < 0)
        return 0;
    /* The nearest string of each length from the repr's on, until one is
     * strictly inside v's interval. */
    for (int precision = 1; !usable && precision <= 17; precision++) {
        snprintf(text, sizeof text, "%.*e", precision - 1, v);
        if (strtod(text, NULL) != v)
            continue;
        boundary = precision == 17 ? 0 : on_boundary(v, text);
        if (boundary < 0)
            return 0;
        usable = boundary == 0;
    }
    return parse_digits(text, digits, exponent);
}

/* strtold and %e read and write a point only in the C locale's numbers;
 * a program may have set LC_NUMERIC to a locale with a decimal comma. */
static size_t shortest_digits(double v, char *digits, int *exponent)
{
    static locale_t c_numbers; /* made once, under the GIL */
    if (!c_numbers)
        c_numbers = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (!c_numbers)
        return 0;
    locale_t caller = uselocale(c_numbers);
    size_t count = shortest_digits_c(v, digits, exponent);
    uselocale(caller);
    return count;
}

/* Needs the GIL (Python's repr). */
size_t skpy_format_double(double v, char *out)
{
    if (isnan(v)) {
        memcpy(out, "NaN", 3);
        return 3;
    }
    if (isinf(v)) {
        memcpy(out, v < 0 ? "-Infinity" : "Infinity", v < 0 ? 9 : 8);
        return v < 0 ? 9 : 8;
    }
    if (v == 0) {
        if (signbit(v)) {
            memcpy(out, "-0", 2);
            return 2;
        }
        out[0] = '0';
        return 1;
    }
    char digits[24];
    int exponent;
    size_t count = shortest_digits(fabs(v), digits, &exponent);
    return count ? layout_pg(v < 0, digits, count, exponent, out) : 0;
}
