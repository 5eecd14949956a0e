/* Proving a plain-dict tool catalog unchanged by the dicts' version tags (PEP 509).
 *
 * CPython 3.11 gives every dict a 64-bit ``ma_version_tag`` drawn from one global counter that
 * only grows: each mutation (insert, replace by another object, delete, pop, popitem, clear,
 * update, setdefault) stores a value no dict ever held before.  A dict we hold a strong
 * reference to (so its address cannot be reused) and whose tag equals the one read earlier has
 * therefore not been mutated since: same keys, same value objects.  The tag is not reachable
 * from Python, hence this module.
 *
 * ``record(catalog)`` walks what bm25's structural copy covers (each definition dict, its
 * ``function`` dict, that one's ``parameters`` dict and its ``properties`` dict), reading each
 * dict's tag BEFORE anything is read out of it: a lookup that runs Python code (a key with a
 * custom ``__eq__``) and mutates a dict leaves an older tag recorded, which only makes the
 * next check fail.  ``same(catalog, record)`` then compares the catalog's items by identity
 * (a list has no tag) and every recorded dict's tag; it calls no Python code, so under the GIL
 * it sees one consistent state.  Given the items are the recorded objects and no recorded dict
 * changed, every dict on the way to an indexed field is still the recorded one (its parent's
 * value pointer did not change), so the whole walked structure is what it was.
 *
 * Built only for CPython 3.11 (setup.py; the guard below): the field exists in 3.12 and 3.13
 * too, but there its low bits are taken by dict watchers and its uses were not audited here;
 * 3.14 removes it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000 || defined(Py_LIMITED_API) \
    || defined(Py_GIL_DISABLED) || defined(PYPY_VERSION)
#error "_dictver reads PyDictObject.ma_version_tag as CPython 3.11 defines it"
#endif

static PyObject *key_function;
static PyObject *key_parameters;
static PyObject *key_properties;

typedef struct {
    PyObject *dicts; /* list: strong references to every recorded dict */
    uint64_t *tags;
    Py_ssize_t n, cap;
} Walk;

/* 0 ok, -1 error (exception set) */
static int
walk_push(Walk *w, PyObject *d)
{
    if (w->n == w->cap) {
        Py_ssize_t cap = w->cap ? w->cap * 2 : 64;
        uint64_t *tags = PyMem_Realloc(w->tags, (size_t)cap * sizeof(uint64_t));
        if (tags == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        w->tags = tags;
        w->cap = cap;
    }
    /* The tag first: nothing has been read out of d yet. */
    w->tags[w->n++] = ((PyDictObject *)d)->ma_version_tag;
    return PyList_Append(w->dicts, d);
}

/* Objects that are certainly not mappings and cannot change: a level holding one is a leaf.
 * Anything else that is not an exact dict (a Mapping, a dict subclass, a list ...) gives up. */
static int
is_plain_leaf(PyObject *v)
{
    return v == Py_None || PyUnicode_CheckExact(v) || PyLong_CheckExact(v) || PyBool_Check(v)
           || PyFloat_CheckExact(v);
}

/* The value at key in exact dict d, as a new reference; *out = NULL when absent.
 * 1: descend into *out (an exact dict); 0: stop here; -1: give up (exception maybe set). */
static int
child(PyObject *d, PyObject *key, PyObject **out)
{
    PyObject *v = PyDict_GetItemWithError(d, key);
    *out = NULL;
    if (v == NULL) {
        return PyErr_Occurred() ? -1 : 0;
    }
    if (PyDict_CheckExact(v)) {
        Py_INCREF(v);
        *out = v;
        return 1;
    }
    return is_plain_leaf(v) ? 0 : -1;
}

static PyObject *
dictver_record(PyObject *module, PyObject *catalog)
{
    if (!PyList_CheckExact(catalog) && !PyTuple_CheckExact(catalog)) {
        Py_RETURN_NONE;
    }
    PyObject *items = PySequence_Tuple(catalog); /* a list may change while we walk */
    if (items == NULL) {
        return NULL;
    }
    Walk w = {PyList_New(0), NULL, 0, 0};
    PyObject *result = NULL;
    if (w.dicts == NULL) {
        goto done;
    }
    Py_ssize_t count = PyTuple_GET_SIZE(items);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *top = PyTuple_GET_ITEM(items, i);
        if (!PyDict_CheckExact(top) || walk_push(&w, top) < 0) {
            goto give_up;
        }
        PyObject *fn, *params, *props;
        int got = child(top, key_function, &fn);
        if (got < 0) {
            goto give_up;
        }
        if (got == 0) {
            fn = top; /* a flat definition is its own function */
            Py_INCREF(fn);
        }
        else if (walk_push(&w, fn) < 0) {
            Py_DECREF(fn);
            goto give_up;
        }
        got = child(fn, key_parameters, &params);
        Py_DECREF(fn);
        if (got < 0) {
            goto give_up;
        }
        if (got == 0) {
            continue;
        }
        if (walk_push(&w, params) < 0) {
            Py_DECREF(params);
            goto give_up;
        }
        got = child(params, key_properties, &props);
        Py_DECREF(params);
        if (got < 0) {
            goto give_up;
        }
        if (got == 1) {
            int pushed = walk_push(&w, props);
            Py_DECREF(props);
            if (pushed < 0) {
                goto give_up;
            }
        }
    }
    {
        PyObject *dicts = PyList_AsTuple(w.dicts);
        PyObject *tags = dicts ? PyBytes_FromStringAndSize((const char *)w.tags,
                                                           w.n * (Py_ssize_t)sizeof(uint64_t))
                               : NULL;
        if (tags != NULL) {
            result = PyTuple_Pack(3, items, dicts, tags);
        }
        Py_XDECREF(dicts);
        Py_XDECREF(tags);
    }
    goto done;
give_up:
    /* A shape this proof does not cover, or a lookup that raised: no record (the caller keeps
     * its == proof), never an error for the host. */
    PyErr_Clear();
    result = Py_None;
    Py_INCREF(result);
done:
    Py_XDECREF(w.dicts);
    PyMem_Free(w.tags);
    Py_DECREF(items);
    return result;
}

static PyObject *
dictver_same(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "same(catalog, record) takes two arguments");
        return NULL;
    }
    PyObject *catalog = args[0], *record = args[1];
    if (!PyTuple_CheckExact(record) || PyTuple_GET_SIZE(record) != 3) {
        PyErr_SetString(PyExc_TypeError, "same(): not a record");
        return NULL;
    }
    PyObject *items = PyTuple_GET_ITEM(record, 0);
    PyObject *dicts = PyTuple_GET_ITEM(record, 1);
    PyObject *tags = PyTuple_GET_ITEM(record, 2);
    if (!PyTuple_CheckExact(items) || !PyTuple_CheckExact(dicts) || !PyBytes_CheckExact(tags)
        || PyBytes_GET_SIZE(tags) != PyTuple_GET_SIZE(dicts) * (Py_ssize_t)sizeof(uint64_t)) {
        PyErr_SetString(PyExc_TypeError, "same(): not a record");
        return NULL;
    }
    PyObject **live;
    Py_ssize_t n;
    if (PyList_CheckExact(catalog)) {
        live = ((PyListObject *)catalog)->ob_item;
        n = PyList_GET_SIZE(catalog);
    }
    else if (PyTuple_CheckExact(catalog)) {
        live = ((PyTupleObject *)catalog)->ob_item;
        n = PyTuple_GET_SIZE(catalog);
    }
    else {
        Py_RETURN_FALSE;
    }
    if (n != PyTuple_GET_SIZE(items)) {
        Py_RETURN_FALSE;
    }
    PyObject **held = ((PyTupleObject *)items)->ob_item;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (live[i] != held[i]) {
            Py_RETURN_FALSE;
        }
    }
    PyObject **ds = ((PyTupleObject *)dicts)->ob_item;
    const char *raw = PyBytes_AS_STRING(tags);
    Py_ssize_t m = PyTuple_GET_SIZE(dicts);
    for (Py_ssize_t i = 0; i < m; i++) {
        uint64_t tag;
        memcpy(&tag, raw + i * (Py_ssize_t)sizeof(uint64_t), sizeof(tag));
        /* The type check reads the line the tag is on: a hand-made record holding something
         * else than dicts proves nothing instead of reading past an object. */
        if (!PyDict_CheckExact(ds[i]) || ((PyDictObject *)ds[i])->ma_version_tag != tag) {
            Py_RETURN_FALSE;
        }
    }
    Py_RETURN_TRUE;
}

static PyObject *
dictver_tag(PyObject *module, PyObject *d)
{
    if (!PyDict_Check(d)) {
        PyErr_SetString(PyExc_TypeError, "tag() takes a dict");
        return NULL;
    }
    return PyLong_FromUnsignedLongLong(((PyDictObject *)d)->ma_version_tag);
}

static PyMethodDef methods[] = {
    {"record", dictver_record, METH_O,
     "record(catalog) -> record | None: the catalog's items and the version tag of every dict "
     "on the way to an indexed field; None for a shape the proof does not cover."},
    {"same", _PyCFunction_CAST(dictver_same), METH_FASTCALL,
     "same(catalog, record) -> bool: the same items, and no recorded dict mutated since."},
    {"tag", dictver_tag, METH_O, "tag(d) -> int: d's version tag (for tests)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_dictver",
    "Version-tag proof that a plain-dict tool catalog is unchanged (CPython 3.11).", -1, methods,
};

PyMODINIT_FUNC
PyInit__dictver(void)
{
    key_function = PyUnicode_InternFromString("function");
    key_parameters = PyUnicode_InternFromString("parameters");
    key_properties = PyUnicode_InternFromString("properties");
    if (key_function == NULL || key_parameters == NULL || key_properties == NULL) {
        return NULL;
    }
    return PyModule_Create(&module_def);
}
