/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * module.c: sketch._sketch, the extension module under the Python package
 * `sketch` (python/sketch/__init__.py): its classes, each a thin shell over
 * a libsketch family, and the library's version.
 */
#include "common.h"

static PyObject *hash_item(PyObject *module, PyObject *item)
{
    (void)module;
    skpy_item it;
    if (skpy_item_get(item, &it) < 0)
        return NULL;
    PyObject *out = PyBytes_FromStringAndSize(it.data, (Py_ssize_t)it.len);
    skpy_item_release(&it);
    return out;
}

static PyMethodDef module_methods[] = {
    {"item_bytes", hash_item, METH_O,
     "item_bytes(item) -> bytes\n\nThe bytes that stand for an item everywhere in sketch: a str's "
     "UTF-8, a\nbytes-like object's bytes, the text of an int, a float or a bool as\n"
     "PostgreSQL prints it (42, 1.5, 1e+20, t)."},
    {NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "sketch._sketch",
    .m_doc = "libsketch's families as Python classes (see the package sketch).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__sketch(void)
{
    PyObject *module = PyModule_Create(&module_def);
    if (!module)
        return NULL;
    int (*const adders[])(PyObject *) = {skpy_add_hll,    skpy_add_hll_map, skpy_add_bloom,
                                         skpy_add_cuckoo, skpy_add_cms,     skpy_add_topk,
                                         skpy_add_tdigest, skpy_add_window_hll,
                                         skpy_add_aging_bloom};
    for (size_t i = 0; i < sizeof adders / sizeof adders[0]; i++)
        if (adders[i](module) < 0) {
            Py_DECREF(module);
            return NULL;
        }
    if (PyModule_AddStringConstant(module, "library_version", sk_version()) < 0 ||
        PyModule_AddStringConstant(module, "__version__", SK_VERSION_STRING) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
