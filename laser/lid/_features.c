/* The per-line features of fastText's supervised prediction (src/dictionary.cc, model.cc), a
 * batch of lines at a time: each line's tokens, their dictionary rows and character n-grams,
 * its word n-grams, and the mean of those input rows (the hidden vector). predictor.py runs the
 * output layer on the result in numpy.
 *
 * Features(input, entries, words, kept, kept_rows, minn, maxn, word_ngrams, bucket, capacity)
 *   input: the float32 input matrix [rows, dim] (a C-contiguous buffer, kept for the object's
 *   life); entries: the dictionary's strings (words, then labels), each ended by a NUL byte;
 *   words: how many of them are words; kept, kept_rows: a pruned model's kept n-gram buckets and
 *   their rows (int64 buffers), or None for a model whose every bucket has a row; capacity: the
 *   distinct words whose summed rows are cached (a settable attribute).
 * Features.hidden(text, lines, unicode_spaces, hidden, counts, tokens)
 *   text: `lines` lines of UTF-8 separated by '\n'; hidden: float32 [lines, dim] to fill with
 *   each line's mean row; counts, tokens: int64 [lines] to fill with each line's number of rows
 *   and of tokens. Tokens are separated by fastText's spaces (" \n\r\t\v\f\0"), or by every
 *   Unicode space as Python's str.split() sees them with `unicode_spaces`.
 *
 * Each distinct word's summed rows stay in a cache (emptied whenever it is full); one batch runs
 * at a time (a lock), without the GIL. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>
#include <structmember.h>
#include <stdint.h>
#include <string.h>

#define FNV_OFFSET 2166136261u
#define FNV_PRIME 16777619u
#define WORD_NGRAM_FACTOR 116049371ull
#define EMPTY (-1)

static const char EOS[] = "</s>";
#define EOS_SIZE 4
static const char LABEL_PREFIX[] = "__label__";
#define LABEL_PREFIX_SIZE 9

typedef struct {
    int32_t *slots;  /* open addressing: an index into the keys' arrays, or EMPTY */
    size_t mask;
} Table;

typedef struct {
    PyObject_HEAD
    Py_buffer input;
    const float *rows;
    int64_t nrows;
    int dim, minn, maxn, word_ngrams;
    uint32_t bucket;
    /* the dictionary: entries (words, then labels) */
    char *entries;
    size_t *entry_start;
    uint32_t *entry_size, *entry_hash;
    int32_t nentries, nwords;
    Table dictionary;
    /* a pruned model's buckets -> rows (open addressing; pruned == 0: row = nwords + bucket) */
    int pruned;
    int64_t *bucket_keys, *bucket_rows;
    size_t bucket_mask;
    /* the word cache: each cached word's key, hash, summed rows, their number, label flag */
    Py_ssize_t capacity;
    int32_t cached, allocated;
    float *sums;
    int64_t *counts;
    uint32_t *hashes, *key_size;
    size_t *key_start;
    uint8_t *labels;
    char *keys;
    size_t keys_used, keys_allocated;
    Table cache;
    /* scratch space of one line */
    uint32_t *line_hashes;
    size_t line_hashes_allocated;
    unsigned char *bracketed;
    size_t bracketed_allocated;
    PyThread_type_lock lock;
} Features;

static inline uint32_t fnv_step(uint32_t hash, unsigned char byte) {
    /* fastText hashes each byte as a signed char widened to uint32 */
    return (hash ^ (uint32_t)(int32_t)(int8_t)byte) * FNV_PRIME;
}

static uint32_t fnv(const unsigned char *text, size_t size) {
    uint32_t hash = FNV_OFFSET;
    for (size_t i = 0; i < size; i++)
        hash = fnv_step(hash, text[i]);
    return hash;
}

static int grow(void **array, size_t item, size_t count) {
    void *grown = realloc(*array, item * (count ? count : 1));
    if (!grown)
        return -1;
    *array = grown;
    return 0;
}

static int table_init(Table *table, size_t at_least) {
    size_t size = 16;
    while (size < 2 * at_least)
        size *= 2;
    int32_t *slots = malloc(size * sizeof(int32_t));
    if (!slots)
        return -1;
    memset(slots, 0xff, size * sizeof(int32_t));
    free(table->slots);
    table->slots = slots;
    table->mask = size - 1;
    return 0;
}

/* ---- the dictionary ---- */

static int32_t dictionary_find(const Features *f, const unsigned char *word, size_t size,
                               uint32_t hash) {
    size_t at = hash & f->dictionary.mask;
    int32_t id;
    while ((id = f->dictionary.slots[at]) != EMPTY) {
        if (f->entry_hash[id] == hash && f->entry_size[id] == size
                && memcmp(f->entries + f->entry_start[id], word, size) == 0)
            return id;
        at = (at + 1) & f->dictionary.mask;
    }
    return EMPTY;
}

static int dictionary_init(Features *f, const char *entries, Py_ssize_t size) {
    int32_t count = 0;
    for (Py_ssize_t i = 0; i < size; i++)
        count += entries[i] == '\0';
    f->entries = malloc(size ? size : 1);
    f->entry_start = malloc(sizeof(size_t) * (count ? count : 1));
    f->entry_size = malloc(sizeof(uint32_t) * (count ? count : 1));
    f->entry_hash = malloc(sizeof(uint32_t) * (count ? count : 1));
    if (!f->entries || !f->entry_start || !f->entry_size || !f->entry_hash
            || table_init(&f->dictionary, count) < 0)
        return -1;
    memcpy(f->entries, entries, size);
    size_t start = 0;
    for (int32_t id = 0; id < count; id++) {
        size_t length = strlen(f->entries + start);
        const unsigned char *word = (const unsigned char *)f->entries + start;
        f->entry_start[id] = start;
        f->entry_size[id] = (uint32_t)length;
        f->entry_hash[id] = fnv(word, length);
        if (dictionary_find(f, word, length, f->entry_hash[id]) == EMPTY) {
            size_t at = f->entry_hash[id] & f->dictionary.mask;
            while (f->dictionary.slots[at] != EMPTY)
                at = (at + 1) & f->dictionary.mask;
            f->dictionary.slots[at] = id;
        }
        start += length + 1;
    }
    f->nentries = count;
    return 0;
}

/* ---- n-gram buckets ---- */

static inline size_t bucket_slot(const Features *f, int64_t bucket) {
    return (size_t)(((uint64_t)bucket * 0x9E3779B97F4A7C15ull) >> 17) & f->bucket_mask;
}

static int buckets_init(Features *f, const int64_t *kept, const int64_t *rows, Py_ssize_t count) {
    size_t size = 16;
    if (count < 0 || (size_t)count > ((size_t)1 << 40))
        return -1;
    while (size < 2 * (size_t)count)
        size *= 2;
    f->bucket_keys = malloc(size * sizeof(int64_t));
    f->bucket_rows = malloc(size * sizeof(int64_t));
    if (!f->bucket_keys || !f->bucket_rows)
        return -1;
    f->bucket_mask = size - 1;
    for (size_t i = 0; i < size; i++)
        f->bucket_keys[i] = EMPTY;
    for (Py_ssize_t i = 0; i < count; i++) {
        size_t at = bucket_slot(f, kept[i]);
        while (f->bucket_keys[at] != EMPTY && f->bucket_keys[at] != kept[i])
            at = (at + 1) & f->bucket_mask;
        f->bucket_keys[at] = kept[i];
        f->bucket_rows[at] = rows[i];
    }
    return 0;
}

/* fastText's pushHash: the input row of an n-gram bucket, or -1 (pruned away) */
static inline int64_t bucket_row(const Features *f, int64_t bucket) {
    if (!f->pruned)
        return f->nwords + bucket;
    size_t at = bucket_slot(f, bucket);
    while (f->bucket_keys[at] != EMPTY) {
        if (f->bucket_keys[at] == bucket)
            return f->bucket_rows[at];
        at = (at + 1) & f->bucket_mask;
    }
    return -1;
}

static inline void add_row(const Features *f, float *sum, int64_t row) {
    const float *values = f->rows + row * f->dim;
    for (int i = 0; i < f->dim; i++)
        sum[i] += values[i];
}

/* ---- one word's rows ---- */

/* fastText's computeSubwords of `<word>`: its minn..maxn character n-grams' rows, added to
 * `sum`; their number */
static int64_t add_character_ngrams(Features *f, const unsigned char *word, size_t size,
                                    float *sum) {
    size_t length = size + 2;
    unsigned char *text = f->bracketed;
    int64_t count = 0;
    text[0] = '<';
    memcpy(text + 1, word, size);
    text[length - 1] = '>';
    for (size_t i = 0; i < length; i++) {
        if ((text[i] & 0xC0) == 0x80)
            continue;
        uint32_t hash = FNV_OFFSET;
        size_t j = i;
        for (int n = 1; j < length && n <= f->maxn; n++) {
            hash = fnv_step(hash, text[j++]);
            while (j < length && (text[j] & 0xC0) == 0x80)
                hash = fnv_step(hash, text[j++]);
            if (n >= f->minn && !(n == 1 && (i == 0 || j == length))) {
                int64_t row = bucket_row(f, hash % f->bucket);
                if (row >= 0) {
                    add_row(f, sum, row);
                    count++;
                }
            }
        }
    }
    return count;
}

/* The cache slot `slot` filled for `word`: fastText's getLine and addSubwords of one token */
static void word_rows(Features *f, int32_t slot, const unsigned char *word, size_t size,
                      uint32_t hash) {
    float *sum = f->sums + (size_t)slot * f->dim;
    int32_t id = dictionary_find(f, word, size, hash);
    int label = id != EMPTY ? id >= f->nwords
        : size >= LABEL_PREFIX_SIZE && memcmp(word, LABEL_PREFIX, LABEL_PREFIX_SIZE) == 0;
    int eos = size == EOS_SIZE && memcmp(word, EOS, EOS_SIZE) == 0;
    int64_t count = 0;
    memset(sum, 0, sizeof(float) * f->dim);
    if (!label) {
        if (id != EMPTY) {
            add_row(f, sum, id);
            count++;
        }
        if (!eos && f->maxn > 0 && f->bucket > 0)
            count += add_character_ngrams(f, word, size, sum);
    }
    f->labels[slot] = (uint8_t)label;
    f->counts[slot] = count;
}

/* ---- the word cache ---- */

static int cache_clear(Features *f) {
    f->cached = 0;
    f->keys_used = 0;
    if (!f->cache.slots)
        return table_init(&f->cache, 8);
    memset(f->cache.slots, 0xff, (f->cache.mask + 1) * sizeof(int32_t));
    return 0;
}

static int cache_reserve(Features *f, size_t key_size) {
    if (f->cached == f->allocated) {
        int32_t size = f->allocated ? 2 * f->allocated : 1024;
        if (grow((void **)&f->sums, sizeof(float) * f->dim, size) < 0
                || grow((void **)&f->counts, sizeof(int64_t), size) < 0
                || grow((void **)&f->hashes, sizeof(uint32_t), size) < 0
                || grow((void **)&f->key_size, sizeof(uint32_t), size) < 0
                || grow((void **)&f->key_start, sizeof(size_t), size) < 0
                || grow((void **)&f->labels, sizeof(uint8_t), size) < 0)
            return -1;
        f->allocated = size;
    }
    if (f->keys_used + key_size > f->keys_allocated) {
        size_t size = f->keys_allocated ? 2 * f->keys_allocated : 1 << 16;
        while (size < f->keys_used + key_size)
            size *= 2;
        if (grow((void **)&f->keys, 1, size) < 0)
            return -1;
        f->keys_allocated = size;
    }
    if (2 * ((size_t)f->cached + 1) > f->cache.mask + 1) {  /* a table twice as large */
        if (table_init(&f->cache, 2 * (f->cache.mask + 1)) < 0)
            return -1;
        for (int32_t slot = 0; slot < f->cached; slot++) {
            size_t at = f->hashes[slot] & f->cache.mask;
            while (f->cache.slots[at] != EMPTY)
                at = (at + 1) & f->cache.mask;
            f->cache.slots[at] = slot;
        }
    }
    return 0;
}

/* The cache slot of `word` (its rows computed if the cache lacks it); -1: out of memory */
static int32_t word_slot(Features *f, const unsigned char *word, size_t size, Py_ssize_t capacity) {
    uint32_t hash = fnv(word, size);
    size_t at = hash & f->cache.mask;
    int32_t slot;
    while ((slot = f->cache.slots[at]) != EMPTY) {
        if (f->hashes[slot] == hash && f->key_size[slot] == size
                && memcmp(f->keys + f->key_start[slot], word, size) == 0)
            return slot;
        at = (at + 1) & f->cache.mask;
    }
    if (f->cached >= capacity && cache_clear(f) < 0)
        return -1;
    if (cache_reserve(f, size) < 0)
        return -1;
    at = hash & f->cache.mask;
    while (f->cache.slots[at] != EMPTY)
        at = (at + 1) & f->cache.mask;
    slot = f->cached++;
    f->cache.slots[at] = slot;
    f->hashes[slot] = hash;
    f->key_size[slot] = (uint32_t)size;
    f->key_start[slot] = f->keys_used;
    memcpy(f->keys + f->keys_used, word, size);
    f->keys_used += size;
    word_rows(f, slot, word, size, hash);
    return slot;
}

/* ---- lines ---- */

/* The length of the space at text[0] (0: none): fastText's, or any Unicode space */
static inline size_t space_at(const unsigned char *text, size_t left, int unicode) {
    unsigned char c = text[0];
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f' || c == '\0')
        return 1;
    if (!unicode)
        return 0;
    if (c >= 0x1C && c <= 0x1F)
        return 1;
    if (c == 0xC2 && left >= 2)
        return text[1] == 0x85 || text[1] == 0xA0 ? 2 : 0;
    if (c == 0xE1 && left >= 3)
        return text[1] == 0x9A && text[2] == 0x80 ? 3 : 0;
    if (c == 0xE2 && left >= 3) {
        if (text[1] == 0x80)
            return (text[2] >= 0x80 && text[2] <= 0x8A) || text[2] == 0xA8 || text[2] == 0xA9
                || text[2] == 0xAF ? 3 : 0;
        return text[1] == 0x81 && text[2] == 0x9F ? 3 : 0;
    }
    if (c == 0xE3 && left >= 3)
        return text[1] == 0x80 && text[2] == 0x80 ? 3 : 0;
    return 0;
}

typedef struct {
    float *hidden;
    int64_t count, hashes;
} Line;

/* One token of a line: its rows added, its hash kept for the word n-grams (labels have none) */
static int add_token(Features *f, Line *line, const unsigned char *word, size_t size,
                     Py_ssize_t capacity) {
    if (size + 2 > f->bracketed_allocated) {
        if (grow((void **)&f->bracketed, 1, 2 * (size + 2)) < 0)
            return -1;
        f->bracketed_allocated = 2 * (size + 2);
    }
    int32_t slot = word_slot(f, word, size, capacity);
    if (slot < 0)
        return -1;
    if (f->labels[slot])
        return 0;
    if (f->counts[slot]) {
        const float *sum = f->sums + (size_t)slot * f->dim;
        for (int i = 0; i < f->dim; i++)
            line->hidden[i] += sum[i];
        line->count += f->counts[slot];
    }
    if ((size_t)line->hashes == f->line_hashes_allocated) {
        size_t size2 = f->line_hashes_allocated ? 2 * f->line_hashes_allocated : 256;
        if (grow((void **)&f->line_hashes, sizeof(uint32_t), size2) < 0)
            return -1;
        f->line_hashes_allocated = size2;
    }
    f->line_hashes[line->hashes++] = f->hashes[slot];
    return 0;
}

/* fastText's addWordNgrams: the rows of 2..wordNgrams consecutive tokens' chained hashes */
static void add_word_ngrams(Features *f, Line *line) {
    const uint32_t *hashes = f->line_hashes;
    for (int64_t i = 0; i < line->hashes; i++) {
        uint64_t hash = (uint64_t)(int64_t)(int32_t)hashes[i];
        for (int64_t j = i + 1; j < line->hashes && j < i + f->word_ngrams; j++) {
            hash = hash * WORD_NGRAM_FACTOR + (uint64_t)(int64_t)(int32_t)hashes[j];
            int64_t row = bucket_row(f, (int64_t)(hash % f->bucket));
            if (row >= 0) {
                add_row(f, line->hidden, row);
                line->count++;
            }
        }
    }
}

/* One line: its mean row in `hidden`, its rows' and its tokens' number */
static int line_features(Features *f, const unsigned char *text, size_t size, int unicode,
                         Py_ssize_t capacity, float *hidden, int64_t *count, int64_t *tokens) {
    Line line = {hidden, 0, 0};
    int64_t read = 0;
    int ended = 0;
    size_t at = 0, space;
    memset(hidden, 0, sizeof(float) * f->dim);
    while (at < size && !ended) {
        while (at < size && (space = space_at(text + at, size - at, unicode)) > 0)
            at += space;
        if (at >= size)
            break;
        size_t start = at;
        while (at < size && space_at(text + at, size - at, unicode) == 0)
            at++;
        read++;
        if (add_token(f, &line, text + start, at - start, capacity) < 0)
            return -1;
        ended = at - start == EOS_SIZE && memcmp(text + start, EOS, EOS_SIZE) == 0;
    }
    if (!ended && add_token(f, &line, (const unsigned char *)EOS, EOS_SIZE, capacity) < 0)
        return -1;
    if (f->word_ngrams > 1 && f->bucket > 0)
        add_word_ngrams(f, &line);
    if (line.count > 0) {
        float scale = (float)(1.0 / (double)line.count);
        for (int i = 0; i < f->dim; i++)
            hidden[i] *= scale;
    }
    *count = line.count;
    *tokens = read;
    return 0;
}

static int batch_features(Features *f, const unsigned char *text, size_t size, Py_ssize_t lines,
                          int unicode, float *hidden, int64_t *counts, int64_t *tokens) {
    Py_ssize_t capacity = f->capacity > 0 ? f->capacity : 1;
    size_t at = 0;
    for (Py_ssize_t line = 0; line < lines; line++) {
        const unsigned char *end = at < size ? memchr(text + at, '\n', size - at) : NULL;
        size_t stop = end ? (size_t)(end - text) : size;
        if (line_features(f, text + (at < size ? at : size), stop > at ? stop - at : 0, unicode,
                          capacity, hidden + (size_t)line * f->dim, counts + line,
                          tokens + line) < 0)
            return -1;
        at = stop + 1;
    }
    return 0;
}

/* ---- the Python type ---- */

static int writable(PyObject *object, Py_buffer *view, Py_ssize_t size, const char *name) {
    if (PyObject_GetBuffer(object, view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    if (view->len != size) {
        PyErr_Format(PyExc_ValueError, "%s: %zd bytes, not %zd", name, view->len, size);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static PyObject *Features_hidden(Features *f, PyObject *args) {
    Py_buffer text, hidden, counts, tokens;
    Py_ssize_t lines;
    int unicode;
    PyObject *hidden_object, *counts_object, *tokens_object;
    if (!PyArg_ParseTuple(args, "y*npOOO", &text, &lines, &unicode, &hidden_object,
                          &counts_object, &tokens_object))
        return NULL;
    if (lines < 0) {
        PyBuffer_Release(&text);
        return PyErr_Format(PyExc_ValueError, "lines: %zd", lines);
    }
    if (writable(hidden_object, &hidden, lines * f->dim * (Py_ssize_t)sizeof(float), "hidden") < 0) {
        PyBuffer_Release(&text);
        return NULL;
    }
    if (writable(counts_object, &counts, lines * (Py_ssize_t)sizeof(int64_t), "counts") < 0) {
        PyBuffer_Release(&text);
        PyBuffer_Release(&hidden);
        return NULL;
    }
    if (writable(tokens_object, &tokens, lines * (Py_ssize_t)sizeof(int64_t), "tokens") < 0) {
        PyBuffer_Release(&text);
        PyBuffer_Release(&hidden);
        PyBuffer_Release(&counts);
        return NULL;
    }
    int failed;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(f->lock, WAIT_LOCK);
    failed = batch_features(f, text.buf, (size_t)text.len, lines, unicode, hidden.buf,
                            counts.buf, tokens.buf);
    if (failed)
        cache_clear(f);  /* a word may be half computed */
    PyThread_release_lock(f->lock);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&text);
    PyBuffer_Release(&hidden);
    PyBuffer_Release(&counts);
    PyBuffer_Release(&tokens);
    if (failed)
        return PyErr_NoMemory();
    Py_RETURN_NONE;
}

static void Features_dealloc(Features *f) {
    if (f->input.obj)
        PyBuffer_Release(&f->input);
    free(f->entries);
    free(f->entry_start);
    free(f->entry_size);
    free(f->entry_hash);
    free(f->dictionary.slots);
    free(f->bucket_keys);
    free(f->bucket_rows);
    free(f->sums);
    free(f->counts);
    free(f->hashes);
    free(f->key_size);
    free(f->key_start);
    free(f->labels);
    free(f->keys);
    free(f->cache.slots);
    free(f->line_hashes);
    free(f->bracketed);
    if (f->lock)
        PyThread_free_lock(f->lock);
    Py_TYPE(f)->tp_free((PyObject *)f);
}

static int int64_buffer(PyObject *object, Py_buffer *view, const char *name) {
    if (PyObject_GetBuffer(object, view, PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    if (view->len % (Py_ssize_t)sizeof(int64_t)) {
        PyErr_Format(PyExc_ValueError, "%s: not int64", name);
        PyBuffer_Release(view);
        return -1;
    }
    return 0;
}

static int Features_buckets(Features *f, PyObject *kept_object, PyObject *rows_object) {
    if (kept_object == Py_None) {
        if (f->bucket > 0 && f->nwords + (int64_t)f->bucket > f->nrows) {
            PyErr_SetString(PyExc_ValueError, "fewer rows than words and buckets");
            return -1;
        }
        return 0;
    }
    Py_buffer kept, rows;
    if (int64_buffer(kept_object, &kept, "kept") < 0)
        return -1;
    if (int64_buffer(rows_object, &rows, "kept_rows") < 0) {
        PyBuffer_Release(&kept);
        return -1;
    }
    Py_ssize_t count = kept.len / (Py_ssize_t)sizeof(int64_t);
    int status = 0;
    const int64_t *values = rows.buf;
    if (rows.len != kept.len) {
        PyErr_SetString(PyExc_ValueError, "kept and kept_rows differ in length");
        status = -1;
    }
    for (Py_ssize_t i = 0; status == 0 && i < count; i++)
        if (values[i] < 0 || values[i] >= f->nrows) {
            PyErr_SetString(PyExc_ValueError, "a kept bucket's row outside the matrix");
            status = -1;
        }
    if (status == 0) {
        f->pruned = 1;
        if (buckets_init(f, kept.buf, values, count) < 0) {
            PyErr_NoMemory();
            status = -1;
        }
    }
    PyBuffer_Release(&kept);
    PyBuffer_Release(&rows);
    return status;
}

static int Features_init(Features *f, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"input", "entries", "words", "kept", "kept_rows", "minn", "maxn",
                            "word_ngrams", "bucket", "capacity", NULL};
    PyObject *input, *kept, *kept_rows;
    Py_buffer entries;
    int words, bucket;
    Py_ssize_t capacity;
    if (f->lock) {
        PyErr_SetString(PyExc_RuntimeError, "Features is initialised once");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "Oy*iOOiiiin", names, &input, &entries,
                                     &words, &kept, &kept_rows, &f->minn, &f->maxn,
                                     &f->word_ngrams, &bucket, &capacity))
        return -1;
    int status = -1;
    if (PyObject_GetBuffer(input, &f->input, PyBUF_C_CONTIGUOUS | PyBUF_ND | PyBUF_FORMAT) < 0)
        goto done;
    if (f->input.ndim != 2 || strcmp(f->input.format, "f") != 0 || f->input.shape[1] <= 0) {
        PyErr_SetString(PyExc_ValueError, "input: a float32 matrix [rows, dim]");
        goto done;
    }
    if (bucket < 0 || words < 0 || words > f->input.shape[0]) {
        PyErr_SetString(PyExc_ValueError, "bucket or words out of range");
        goto done;
    }
    f->rows = f->input.buf;
    f->nrows = f->input.shape[0];
    f->dim = (int)f->input.shape[1];
    f->bucket = (uint32_t)bucket;
    f->nwords = words;
    f->capacity = capacity;
    if (dictionary_init(f, entries.buf, entries.len) < 0 || cache_clear(f) < 0) {
        PyErr_NoMemory();
        goto done;
    }
    if (Features_buckets(f, kept, kept_rows) < 0)
        goto done;
    f->lock = PyThread_allocate_lock();
    if (!f->lock) {
        PyErr_NoMemory();
        goto done;
    }
    status = 0;
done:
    PyBuffer_Release(&entries);
    return status;
}

static PyMethodDef Features_methods[] = {
    {"hidden", (PyCFunction)Features_hidden, METH_VARARGS,
     "hidden(text, lines, unicode_spaces, hidden, counts, tokens): each line's mean input row"},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef Features_members[] = {
    {"capacity", T_PYSSIZET, offsetof(Features, capacity), 0,
     "how many distinct words' summed rows the cache holds"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject FeaturesType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "laser.lid._features.Features",
    .tp_basicsize = sizeof(Features),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "fastText's per-line features of a loaded model (see the module's source)",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Features_init,
    .tp_dealloc = (destructor)Features_dealloc,
    .tp_methods = Features_methods,
    .tp_members = Features_members,
};

static struct PyModuleDef features_module = {
    PyModuleDef_HEAD_INIT, "_features",
    "fastText's per-line features (hidden vectors) for laser's language-ID predictor", -1, NULL,
};

PyMODINIT_FUNC PyInit__features(void) {
    if (PyType_Ready(&FeaturesType) < 0)
        return NULL;
    PyObject *module = PyModule_Create(&features_module);
    if (!module)
        return NULL;
    Py_INCREF(&FeaturesType);
    if (PyModule_AddObject(module, "Features", (PyObject *)&FeaturesType) < 0) {
        Py_DECREF(&FeaturesType);
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
