/* One BM25F ranking in one call: the compiled form of `Scorer.rank`'s exhaustive path (scoring.py).
 *
 * The numpy path pays ~40 calls per ranking whatever its size, and a long request is ranked up to 9
 * times (whole request plus clauses), so at 10k tools the calls, not the postings, set its latency.
 * This loop gives the same answer bit for bit:
 *   - each doc's score is a float64 sum starting at 0.0, adding its float32 contributions (already
 *     weighted) in term order, docs ascending within a term: the order `np.bincount` adds them in;
 *   - a doc's field mask is the OR of its postings' masks, its word mask the OR of its terms' bits;
 *   - the top n by score descending, then doc ascending, among the docs `keep` allows.
 * It holds the GIL throughout (a call takes microseconds) and zeroes the caller's scratch arrays
 * again before it creates any Python object (which could run other Python code), so two calls
 * never share them.
 *
 * Built as an optional extension (setup.py): without a compiler, scoring.py ranks with numpy alone.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct {
    double score;
    int32_t doc;
    uint8_t fields;
    uint64_t groups;
} Entry;

/* a ranks before b: higher score, then lower doc */
static inline int before(const Entry *a, const Entry *b) {
    return a->score > b->score || (a->score == b->score && a->doc < b->doc);
}

/* Min-heap of the n best so far: the root is the worst kept entry. */
static void sift_down(Entry *heap, Py_ssize_t size, Py_ssize_t i) {
    for (;;) {
        Py_ssize_t worst = i, l = 2 * i + 1, r = l + 1;
        if (l < size && before(&heap[worst], &heap[l])) worst = l;
        if (r < size && before(&heap[worst], &heap[r])) worst = r;
        if (worst == i) return;
        Entry t = heap[i]; heap[i] = heap[worst]; heap[worst] = t;
        i = worst;
    }
}

static int by_rank(const void *a, const void *b) {
    return before((const Entry *)a, (const Entry *)b) ? -1 : before((const Entry *)b, (const Entry *)a);
}

/* A buffer of `count` items of `itemsize` bytes, C-contiguous; `what` names it in the error. */
static int get_buffer(PyObject *obj, Py_buffer *view, int flags, Py_ssize_t itemsize, const char *what) {
    if (PyObject_GetBuffer(obj, view, flags | PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return -1;
    if (view->itemsize != itemsize) {
        PyErr_Format(PyExc_TypeError, "%s: expected items of %zd bytes, got %zd", what, itemsize, view->itemsize);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

/* A list of `cls` (a tuple type: scoring.Ranked) instances (doc, score, fields, groups), one per entry:
 * made as `tuple.__new__(cls, ...)` makes them, without a call through Python per entry. */
static PyObject *results(PyTypeObject *cls, const Entry *entries, Py_ssize_t size) {
    PyObject *list = PyList_New(size);
    for (Py_ssize_t i = 0; list && i < size; i++) {
        const Entry *e = &entries[i];
        PyObject *item = cls->tp_alloc(cls, 4);
        if (!item) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, i, item);
        PyObject *values[4] = {PyLong_FromLong(e->doc), PyFloat_FromDouble(e->score),
                               PyLong_FromLong(e->fields), PyLong_FromUnsignedLongLong(e->groups)};
        for (int j = 0; j < 4; j++) {
            if (!values[j]) {
                for (int k = 0; k < 4; k++) Py_XDECREF(values[k]);
                Py_CLEAR(list);
                break;
            }
        }
        for (int j = 0; list && j < 4; j++) PyTuple_SET_ITEM(item, j, values[j]);
    }
    return list;
}

/* One query term's arrays, held for the call. */
typedef struct {
    Py_buffer docs, contrib, masks;
    uint64_t bit;
    int held; /* how many of the three buffers are held */
} Term;

static void release(Term *term) {
    Py_buffer *views[3] = {&term->docs, &term->contrib, &term->masks};
    for (int i = 0; i < term->held; i++) PyBuffer_Release(views[i]);
    term->held = 0;
}

/* Hold `obj`'s (docs int32, contributions float32, field masks uint8, word bit, ...). */
static int hold(PyObject *obj, Term *term) {
    if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) < 4) {
        PyErr_SetString(PyExc_TypeError, "a term must be a tuple (docs, contributions, field masks, bit, ...)");
        return -1;
    }
    term->bit = PyLong_AsUnsignedLongLong(PyTuple_GET_ITEM(obj, 3));
    if (term->bit == (uint64_t)-1 && PyErr_Occurred()) return -1;
    if (get_buffer(PyTuple_GET_ITEM(obj, 0), &term->docs, PyBUF_SIMPLE, 4, "docs") < 0) return -1;
    term->held = 1;
    if (get_buffer(PyTuple_GET_ITEM(obj, 1), &term->contrib, PyBUF_SIMPLE, 4, "contributions") < 0) return -1;
    term->held = 2;
    if (get_buffer(PyTuple_GET_ITEM(obj, 2), &term->masks, PyBUF_SIMPLE, 1, "field masks") < 0) return -1;
    term->held = 3;
    const Py_ssize_t count = term->docs.len / 4;
    if (term->contrib.len / 4 != count || term->masks.len != count) {
        PyErr_SetString(PyExc_ValueError, "a term's arrays differ in length");
        return -1;
    }
    return 0;
}

#define BISECT_ABOVE 32 /* postings per top doc above which a term's masks are bisected, not scanned */

/* Where `doc` is in the ascending `docs`, or -1. */
static Py_ssize_t find(const int32_t *docs, Py_ssize_t count, int32_t doc) {
    Py_ssize_t lo = 0, hi = count;
    while (lo < hi) {
        const Py_ssize_t mid = lo + (hi - lo) / 2;
        if (docs[mid] < doc) lo = mid + 1;
        else hi = mid;
    }
    return lo < count && docs[lo] == doc ? lo : -1;
}

/* rank(cls, terms, n, keep, drop_zero, positive, acc, seen, touched)
 *     -> [cls(doc, score, fields, groups)], best first
 *
 * cls: a tuple type of 4 items (scoring.Ranked);
 * terms: sequence of (docs int32 ascending, contributions float32, field masks uint8, word bit, ...);
 * keep: bool per doc or None; drop_zero: drop docs summing to exactly 0 (as the catalog-sized
 * numpy sum does); positive: every weight is positive, else keep only docs scoring above 0.
 * acc (float64), seen (uint8), touched (int32): scratch, one item per doc, zero.
 *
 * The sum touches two per-doc arrays, the score and a seen flag; the masks are found afterwards for
 * the n best only. (At 100k tools a long request sums 300k postings into 100k docs: summing the
 * masks there too, into two more per-doc arrays, made its largest rankings ~30% slower.) */
static PyObject *rank(PyObject *self, PyObject *args) {
    PyTypeObject *cls;
    PyObject *terms, *keep_obj, *acc_obj, *seen_obj, *touched_obj;
    Py_ssize_t n;
    int drop_zero, positive;
    if (!PyArg_ParseTuple(args, "O!OnOppOOO", &PyType_Type, &cls, &terms, &n, &keep_obj, &drop_zero, &positive,
                          &acc_obj, &seen_obj, &touched_obj))
        return NULL;
    if (!PyType_IsSubtype(cls, &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError, "cls must be a tuple type");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(terms, "terms must be a sequence");
    if (!seq) return NULL;
    Py_buffer acc_v = {0}, seen_v = {0}, touched_v = {0}, keep_v = {0};
    PyObject *result = NULL;
    Entry *heap = NULL;
    const Py_ssize_t n_terms = PySequence_Fast_GET_SIZE(seq);
    Term *held = PyMem_Calloc(n_terms ? n_terms : 1, sizeof(Term));
    Py_ssize_t n_held = 0, n_touched = 0, size = 0; /* terms held; docs touched; entries in the heap */
    int failed = 1; /* until the heap is sorted */
    const uint8_t *keep = NULL;
    int have_keep = 0;
    if (!held) {
        PyErr_NoMemory();
        goto fail_seq;
    }
    if (get_buffer(acc_obj, &acc_v, PyBUF_WRITABLE, 8, "acc") < 0) goto fail_seq;
    if (get_buffer(seen_obj, &seen_v, PyBUF_WRITABLE, 1, "seen") < 0) goto fail_acc;
    if (get_buffer(touched_obj, &touched_v, PyBUF_WRITABLE, 4, "touched") < 0) goto fail_seen;
    const Py_ssize_t n_docs = acc_v.len / 8;
    if (seen_v.len != n_docs || touched_v.len / 4 != n_docs) {
        PyErr_SetString(PyExc_ValueError, "scratch arrays must have one item per doc");
        goto fail_touched;
    }
    if (keep_obj != Py_None) {
        if (get_buffer(keep_obj, &keep_v, PyBUF_SIMPLE, 1, "keep") < 0) goto fail_touched;
        have_keep = 1;
        if (keep_v.len != n_docs) {
            PyErr_SetString(PyExc_ValueError, "keep must have one item per doc");
            goto fail_keep;
        }
        keep = keep_v.buf;
    }
    for (; n_held < n_terms; n_held++)
        if (hold(PySequence_Fast_GET_ITEM(seq, n_held), &held[n_held]) < 0) {
            n_held++; /* release what it holds */
            goto fail_terms;
        }
    double *acc = acc_v.buf;
    uint8_t *seen = seen_v.buf;
    int32_t *touched = touched_v.buf;

    for (Py_ssize_t t = 0; t < n_terms; t++) {
        const int32_t *docs = held[t].docs.buf;
        const float *contrib = held[t].contrib.buf;
        const Py_ssize_t count = held[t].docs.len / 4;
        for (Py_ssize_t i = 0; i < count; i++) {
            const int32_t d = docs[i];
            if (d < 0 || d >= n_docs || (i && d <= docs[i - 1])) { /* ascending: masks may be bisected */
                PyErr_SetString(PyExc_ValueError, "a term's docs must be ascending and name docs in range");
                goto reset;
            }
            if (!seen[d]) {
                seen[d] = 1;
                touched[n_touched++] = d;
            }
            acc[d] += (double)contrib[i];
        }
    }

    /* The n best of the touched docs. */
    const Py_ssize_t cap = n < n_touched ? n : n_touched;
    if (cap > 0 && !(heap = PyMem_Malloc(sizeof(Entry) * cap))) {
        PyErr_NoMemory();
        goto reset;
    }
    for (Py_ssize_t i = 0; i < n_touched && cap > 0; i++) {
        const int32_t d = touched[i];
        const Entry e = {acc[d], d, 0, 0};
        if (size == cap && !before(&e, &heap[0])) continue; /* most docs, once the heap is full */
        if ((keep && !keep[d]) || (drop_zero && e.score == 0.0) || (!positive && !(e.score > 0.0))) continue;
        if (size < cap) {
            heap[size++] = e;
            if (size == cap) /* heapify */
                for (Py_ssize_t j = cap / 2 - 1; j >= 0; j--) sift_down(heap, cap, j);
        } else {
            heap[0] = e;
            sift_down(heap, cap, 0);
        }
    }
    /* The masks of the n best only, each marked (seen 2) with its place in the heap (in acc, whose
     * sums the heap holds now): found in a term's docs by bisection when they are many, else by a
     * scan (the cheaper of size * log2(count) and count steps). */
    for (Py_ssize_t i = 0; i < size; i++) {
        acc[heap[i].doc] = (double)i;
        seen[heap[i].doc] = 2;
    }
    for (Py_ssize_t t = 0; t < n_terms && size; t++) {
        const int32_t *docs = held[t].docs.buf;
        const uint8_t *masks = held[t].masks.buf;
        const Py_ssize_t count = held[t].docs.len / 4;
        const uint64_t bit = held[t].bit;
        if (count > size * BISECT_ABOVE) {
            for (Py_ssize_t i = 0; i < size; i++) {
                const Py_ssize_t at = find(docs, count, heap[i].doc);
                if (at >= 0) {
                    heap[i].fields |= masks[at];
                    heap[i].groups |= bit;
                }
            }
        } else {
            for (Py_ssize_t i = 0; i < count; i++)
                if (seen[docs[i]] == 2) {
                    Entry *e = &heap[(Py_ssize_t)acc[docs[i]]];
                    e->fields |= masks[i];
                    e->groups |= bit;
                }
        }
    }
    qsort(heap, size, sizeof(Entry), by_rank);
    failed = 0;

reset:
    for (Py_ssize_t i = 0; i < n_touched; i++) {
        const int32_t d = touched[i];
        acc[d] = 0.0;
        seen[d] = 0;
    }
    if (!failed) result = results(cls, heap, size);
    PyMem_Free(heap);
fail_terms:
    for (Py_ssize_t t = 0; t < n_held; t++) release(&held[t]);
fail_keep:
    if (have_keep) PyBuffer_Release(&keep_v);
fail_touched:
    PyBuffer_Release(&touched_v);
fail_seen:
    PyBuffer_Release(&seen_v);
fail_acc:
    PyBuffer_Release(&acc_v);
fail_seq:
    PyMem_Free(held);
    Py_DECREF(seq);
    return result;
}

static PyMethodDef methods[] = {
    {"rank", rank, METH_VARARGS, "The top n docs of one BM25F ranking (see _rank.c)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_rank", NULL, -1, methods};

PyMODINIT_FUNC PyInit__rank(void) { return PyModule_Create(&module); }
