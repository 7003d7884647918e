/* SPDX-License-Identifier: BSD-3-Clause */
/* report.c: the printing of report.h: "name: value" lines, or one JSON
 * object, for info, count -v and check -c. */
#include "report.h"

#include <string.h>

void report_begin(struct report *r, FILE *out, int json)
{
    r->out = json ? stdout : out;
    r->json = json;
    r->fields = 0;
    if (json)
        fputc('{', r->out);
}

void report_end(struct report *r)
{
    if (r->json)
        fputs("}\n", r->out);
}

static void key(struct report *r, const char *name)
{
    if (!r->json) {
        fprintf(r->out, "%s: ", name);
        return;
    }
    fputs(r->fields++ ? ", \"" : "\"", r->out);
    for (const char *p = name; *p != '\0'; p++)
        fputc(*p == ' ' || *p == '-' ? '_' : *p, r->out);
    fputs("\": ", r->out);
}

void report_uint(struct report *r, const char *name, uint64_t value)
{
    key(r, name);
    fprintf(r->out, r->json ? "%llu" : "%llu\n", (unsigned long long)value);
}

void report_double(struct report *r, const char *name, const char *text_format, double value)
{
    key(r, name);
    if (r->json) {
        fprintf(r->out, "%.17g", value);
    } else {
        fprintf(r->out, text_format, value);
        fputc('\n', r->out);
    }
}

void json_string(FILE *out, const char *s, size_t n)
{
    fputc('"', out);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

void report_string(struct report *r, const char *name, const char *value)
{
    key(r, name);
    if (!r->json) {
        fprintf(r->out, "%s\n", value);
        return;
    }
    json_string(r->out, value, strlen(value));
}

void report_bytes(struct report *r, const char *name, double bytes)
{
    if (r->json) {
        char bytes_name[64];
        snprintf(bytes_name, sizeof bytes_name, "%s bytes", name);
        report_uint(r, bytes_name, (uint64_t)bytes);
        return;
    }
    static const char *const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    double shown = bytes;
    while (shown >= 1024 && u < 4) {
        shown /= 1024;
        u++;
    }
    if (u == 0)
        fprintf(r->out, "%s: %.0f bytes\n", name, bytes);
    else
        fprintf(r->out, "%s: %.0f bytes (%.1f %s)\n", name, bytes, shown, units[u]);
}

void report_estimate(struct report *r, const sk_hll *h)
{
    sk_hll_estimate e;
    sk_hll_estimate_with_bounds(h, &e);
    report_uint(r, "estimate", e.count);
    report_uint(r, "precision", sk_hll_precision(h));
    if (r->json) {
        report_double(r, "standard error", "%g", e.relative_error);
        key(r, "bounds");
        fprintf(r->out, "[[%.0f, %.0f], [%.0f, %.0f], [%.0f, %.0f]]", e.lower[0], e.upper[0],
                e.lower[1], e.upper[1], e.lower[2], e.upper[2]);
        return;
    }
    fprintf(r->out, "standard error: %.3f%%\n", e.relative_error * 100);
    static const char *const confidence[3] = {"68.27%", "95.45%", "99.73%"};
    for (int k = 0; k < 3; k++)
        fprintf(r->out, "%d sd (%s): %.0f .. %.0f\n", k + 1, confidence[k], e.lower[k],
                e.upper[k]);
}
