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
 * at a time (a lock), without the GIL.
 *
 * line_scripts(text, lines, table, out, han, kana, hangul, latin): each line's main script (the
 * script decides first: laser/lid/scripts.py). decode, softmax_exp: a product-quantised matrix
 * decoded, a softmax's exponentials. */
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
#define CACHE_LINE 64
#define NGRAMS_AT_ONCE 4096  /* a word's character n-grams looked up together, at most */

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(address) __builtin_prefetch(address)
#else
#define PREFETCH(address) ((void)(address))
#endif

/* The functions that sum rows also built for AVX2, chosen at run time where the compiler can */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define SUMS_ROWS __attribute__((target_clones("avx2", "default")))
#else
#define SUMS_ROWS
#endif

static const unsigned char EOS[] = "</s>";
#define EOS_SIZE 4
static const char LABEL_PREFIX[] = "__label__";
#define LABEL_PREFIX_SIZE 9

/* Open addressing, linear probing: a key's hash and its index (EMPTY: a free entry) */
typedef struct {
    uint32_t hash;
    int32_t index;
} Entry;

typedef struct {
    Entry *entries;
    size_t mask;
} Table;

/* A cached word: its key in the keys' arena, its hash, its rows' number, whether a label */
typedef struct {
    size_t key_start;
    uint32_t key_size;
    uint32_t hash;
    int64_t count;
    uint8_t label;
} Slot;

/* A token of the line being read, and its cache slot */
typedef struct {
    const unsigned char *word;
    size_t size;
    uint32_t hash;
    int32_t slot;
} Token;

typedef struct {
    PyObject_HEAD
    Py_buffer input;
    const float *rows;  /* the input matrix [nrows, dim] */
    int64_t nrows;
    int dim, minn, maxn, word_ngrams;
    uint32_t bucket;
    uint64_t bucket_inverse;  /* for remainder(): 2^64 / bucket, rounded up */
    /* the dictionary: entries (words, then labels) */
    char *entries;
    size_t *entry_start;
    uint32_t *entry_size;
    int32_t nwords;
    Table dictionary;
    /* a pruned model's bucket -> row + 1 (0: pruned away; NULL: every bucket's row is
     * nwords + bucket) */
    int32_t *bucket_rows;
    /* the word cache: each word's slot and summed rows */
    Py_ssize_t capacity;
    int32_t cached, allocated;
    Slot *slots;
    float *sums;
    char *keys;
    size_t keys_used, keys_allocated;
    Table cache;
    /* scratch space of one line */
    Token *tokens;
    size_t tokens_allocated;
    uint32_t *line_hashes;
    size_t line_hashes_allocated;
    int64_t *ngrams;
    size_t ngrams_allocated;
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

/* `*array` with room for `count` items of `item` bytes (`*allocated` of them now) */
static int reserve(void **array, size_t *allocated, size_t item, size_t count) {
    if (count <= *allocated)
        return 0;
    size_t size = *allocated ? 2 * *allocated : 256;
    while (size < count)
        size *= 2;
    void *grown = realloc(*array, item * size);
    if (!grown)
        return -1;
    *array = grown;
    *allocated = size;
    return 0;
}

static int table_init(Table *table, size_t at_least) {
    size_t size = 16;
    while (size < 2 * at_least)
        size *= 2;
    Entry *entries = malloc(size * sizeof(Entry));
    if (!entries)
        return -1;
    for (size_t i = 0; i < size; i++)
        entries[i].index = EMPTY;
    free(table->entries);
    table->entries = entries;
    table->mask = size - 1;
    return 0;
}

static void table_put(Table *table, uint32_t hash, int32_t index) {
    size_t at = hash & table->mask;
    while (table->entries[at].index != EMPTY)
        at = (at + 1) & table->mask;
    table->entries[at].hash = hash;
    table->entries[at].index = index;
}

/* hash % bucket, without a division where the compiler has 128-bit integers (Lemire, Kaser
 * and Kurz, "Faster remainder by direct computation", 2019) */
static inline uint32_t remainder32(const Features *f, uint32_t hash) {
#ifdef __SIZEOF_INT128__
    return (uint32_t)(((unsigned __int128)(f->bucket_inverse * hash) * f->bucket) >> 64);
#else
    return hash % f->bucket;
#endif
}

static inline void prefetch_row(const Features *f, const float *row) {
    for (size_t offset = 0; offset < sizeof(float) * (size_t)f->dim; offset += CACHE_LINE)
        PREFETCH((const char *)row + offset);
}

static inline void add_row(const Features *f, float *sum, const float *row) {
    for (int i = 0; i < f->dim; i++)
        sum[i] += row[i];
}

/* ---- the dictionary ---- */

static int32_t dictionary_find(const Features *f, const unsigned char *word, size_t size,
                               uint32_t hash) {
    const Table *table = &f->dictionary;
    for (size_t at = hash & table->mask; table->entries[at].index != EMPTY;
         at = (at + 1) & table->mask) {
        int32_t id = table->entries[at].index;
        if (table->entries[at].hash == hash && f->entry_size[id] == size
                && memcmp(f->entries + f->entry_start[id], word, size) == 0)
            return id;
    }
    return EMPTY;
}

static int dictionary_init(Features *f, const char *entries, Py_ssize_t size) {
    int32_t count = 0;
    for (Py_ssize_t i = 0; i < size; i++)
        count += entries[i] == '\0';
    f->entries = malloc(size > 0 ? (size_t)size : 1);
    f->entry_start = malloc(sizeof(size_t) * (count ? count : 1));
    f->entry_size = malloc(sizeof(uint32_t) * (count ? count : 1));
    if (!f->entries || !f->entry_start || !f->entry_size || table_init(&f->dictionary, count) < 0)
        return -1;
    memcpy(f->entries, entries, size);
    size_t start = 0;
    for (int32_t id = 0; id < count; id++) {
        const unsigned char *word = (const unsigned char *)f->entries + start;
        size_t length = strlen((const char *)word);
        uint32_t hash = fnv(word, length);
        f->entry_start[id] = start;
        f->entry_size[id] = (uint32_t)length;
        if (dictionary_find(f, word, length, hash) == EMPTY)  /* the first of equal entries */
            table_put(&f->dictionary, hash, id);
        start += length + 1;
    }
    return 0;
}

/* ---- n-gram buckets ---- */

/* A pruned model's map, one entry a bucket: an n-gram's row is one load away (calloc leaves
 * the pages of buckets without a row untouched) */
static int buckets_init(Features *f, const int64_t *kept, const int64_t *rows, Py_ssize_t count) {
    f->bucket_rows = calloc(f->bucket ? f->bucket : 1, sizeof(int32_t));
    if (!f->bucket_rows)
        return -1;
    for (Py_ssize_t i = 0; i < count; i++)  /* a later pair of a bucket wins, as in fastText */
        f->bucket_rows[kept[i]] = (int32_t)rows[i] + 1;
    return 0;
}

static inline void prefetch_bucket(const Features *f, int64_t bucket) {
    if (f->bucket_rows)
        PREFETCH(f->bucket_rows + bucket);
}

/* fastText's pushHash: the input row of an n-gram bucket, or -1 (pruned away) */
static inline int64_t bucket_row(const Features *f, int64_t bucket) {
    return f->bucket_rows ? (int64_t)f->bucket_rows[bucket] - 1 : f->nwords + bucket;
}

/* The rows of n-gram buckets (f->ngrams[0:count]) added to `sum`, their loads overlapped:
 * every bucket's entry prefetched, then every row; the number of rows */
SUMS_ROWS static int64_t add_buckets(const Features *f, size_t count, float *sum) {
    int64_t *rows = f->ngrams;
    size_t kept = 0;
    for (size_t i = 0; i < count; i++)
        prefetch_bucket(f, rows[i]);
    for (size_t i = 0; i < count; i++) {
        int64_t row = bucket_row(f, rows[i]);
        if (row >= 0) {
            rows[kept++] = row;
            prefetch_row(f, f->rows + row * f->dim);
        }
    }
    for (size_t i = 0; i < kept; i++)
        add_row(f, sum, f->rows + rows[i] * f->dim);
    return (int64_t)kept;
}

/* ---- one word's rows ---- */

/* fastText's computeSubwords of `<word>`: its minn..maxn character n-grams' rows, added to
 * `sum`; their number */
static int64_t add_character_ngrams(Features *f, const unsigned char *word, size_t size,
                                    float *sum) {
    size_t length = size + 2, count = 0;
    int64_t rows = 0;
    unsigned char *text = f->bracketed;
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
                f->ngrams[count++] = remainder32(f, hash);
                if (count == NGRAMS_AT_ONCE) {  /* a very long word: a part at a time */
                    rows += add_buckets(f, count, sum);
                    count = 0;
                }
            }
        }
    }
    return rows + add_buckets(f, count, sum);
}

/* Room for `<word>` and for its character n-grams looked up together */
static int reserve_word(Features *f, size_t size) {
    if (reserve((void **)&f->bracketed, &f->bracketed_allocated, 1, size + 2) < 0)
        return -1;
    return reserve((void **)&f->ngrams, &f->ngrams_allocated, sizeof(int64_t), NGRAMS_AT_ONCE);
}

/* The cache slot `index` filled for a token: fastText's getLine and addSubwords of it */
static int word_rows(Features *f, int32_t index, const Token *token) {
    Slot *slot = f->slots + index;
    float *sum = f->sums + (size_t)index * f->dim;
    int32_t id = dictionary_find(f, token->word, token->size, token->hash);
    int eos = token->size == EOS_SIZE && memcmp(token->word, EOS, EOS_SIZE) == 0;
    slot->label = id != EMPTY ? id >= f->nwords
        : token->size >= LABEL_PREFIX_SIZE
          && memcmp(token->word, LABEL_PREFIX, LABEL_PREFIX_SIZE) == 0;
    slot->count = 0;
    memset(sum, 0, sizeof(float) * f->dim);
    if (slot->label)
        return 0;
    if (id != EMPTY) {
        add_row(f, sum, f->rows + (int64_t)id * f->dim);
        slot->count++;
    }
    if (!eos && f->maxn > 0 && f->bucket > 0) {
        if (reserve_word(f, token->size) < 0)
            return -1;
        slot->count += add_character_ngrams(f, token->word, token->size, sum);
    }
    return 0;
}

/* ---- the word cache ---- */

static void cache_clear(Features *f) {
    f->cached = 0;
    f->keys_used = 0;
    for (size_t i = 0; i <= f->cache.mask; i++)
        f->cache.entries[i].index = EMPTY;
}

/* Room in the cache for `words` more words of `bytes` bytes in all */
static int cache_reserve(Features *f, size_t words, size_t bytes) {
    size_t slots = (size_t)f->cached + words;
    if (slots > (size_t)f->allocated) {
        size_t allocated = (size_t)f->allocated, sums = allocated;
        if (reserve((void **)&f->slots, &allocated, sizeof(Slot), slots) < 0
                || reserve((void **)&f->sums, &sums, sizeof(float) * f->dim, slots) < 0)
            return -1;
        f->allocated = (int32_t)(allocated < sums ? allocated : sums);
    }
    if (reserve((void **)&f->keys, &f->keys_allocated, 1, f->keys_used + bytes) < 0)
        return -1;
    if (2 * slots > f->cache.mask + 1) {  /* a larger table, the words put in again */
        size_t size = f->cache.mask + 1;
        while (2 * slots > size)
            size *= 2;
        if (table_init(&f->cache, size / 2) < 0)
            return -1;
        for (int32_t index = 0; index < f->cached; index++)
            table_put(&f->cache, f->slots[index].hash, index);
    }
    return 0;
}

static inline int same_word(const Features *f, int32_t index, const Token *token) {
    const Slot *slot = f->slots + index;
    return slot->hash == token->hash && slot->key_size == token->size
        && memcmp(f->keys + slot->key_start, token->word, token->size) == 0;
}

/* The first cached word of the token's hash (EMPTY: none), its data prefetched */
static int32_t cache_probe(const Features *f, const Token *token) {
    const Table *table = &f->cache;
    for (size_t at = token->hash & table->mask; table->entries[at].index != EMPTY;
         at = (at + 1) & table->mask)
        if (table->entries[at].hash == token->hash) {
            int32_t index = table->entries[at].index;
            PREFETCH(f->slots + index);
            PREFETCH(f->keys + f->slots[index].key_start);
            prefetch_row(f, f->sums + (size_t)index * f->dim);
            return index;
        }
    PREFETCH(f->dictionary.entries + (token->hash & f->dictionary.mask));  /* a new word */
    return EMPTY;
}

/* The token's cache slot, its rows computed if the cache lacks it (room reserved); -1: out
 * of memory */
static int32_t word_slot(Features *f, const Token *token) {
    const Table *table = &f->cache;
    for (size_t at = token->hash & table->mask; table->entries[at].index != EMPTY;
         at = (at + 1) & table->mask)
        if (table->entries[at].hash == token->hash
                && same_word(f, table->entries[at].index, token))
            return table->entries[at].index;
    int32_t index = f->cached++;
    Slot *slot = f->slots + index;
    slot->hash = token->hash;
    slot->key_size = (uint32_t)token->size;
    slot->key_start = f->keys_used;
    memcpy(f->keys + f->keys_used, token->word, token->size);
    f->keys_used += token->size;
    table_put(&f->cache, token->hash, index);
    return word_rows(f, index, token) < 0 ? -1 : index;
}

/* ---- lines ---- */

/* Each byte: 1, a space; 2, the first byte of a Unicode space perhaps; 0, neither. Without
 * unicode_spaces (fastText's spaces), then with. */
static unsigned char BYTE_KINDS[2][256];

static void byte_kinds_init(void) {
    static const unsigned char fasttext[] = " \n\r\t\v\f";
    for (int unicode = 0; unicode < 2; unicode++) {
        for (size_t i = 0; i < sizeof(fasttext); i++)  /* the NUL that ends it too */
            BYTE_KINDS[unicode][fasttext[i]] = 1;
    }
    for (int c = 0x1C; c <= 0x1F; c++)
        BYTE_KINDS[1][c] = 1;
    BYTE_KINDS[1][0xC2] = BYTE_KINDS[1][0xE1] = BYTE_KINDS[1][0xE2] = BYTE_KINDS[1][0xE3] = 2;
}

/* The length of the space at text[0] (0: none): fastText's, or any Unicode space */
static inline size_t space_at(const unsigned char *text, size_t left, int unicode) {
    unsigned char c = text[0];
    int kind = BYTE_KINDS[unicode][c];
    if (kind < 2)
        return (size_t)kind;
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

static int add_token(Features *f, size_t *count, const unsigned char *word, size_t size) {
    if (reserve((void **)&f->tokens, &f->tokens_allocated, sizeof(Token), *count + 1) < 0)
        return -1;
    Token *token = f->tokens + (*count)++;
    token->word = word;
    token->size = size;
    token->hash = fnv(word, size);
    PREFETCH(f->cache.entries + (token->hash & f->cache.mask));
    return 0;
}

/* fastText's readWord over one line: its tokens up to `</s>`, then `</s>` unless it came; the
 * number of tokens read (-1: out of memory) */
static int64_t tokenize(Features *f, const unsigned char *text, size_t size, int unicode,
                        size_t *count) {
    size_t at = 0, space;
    int64_t read = 0;
    *count = 0;
    while (at < size) {
        while (at < size && (space = space_at(text + at, size - at, unicode)) > 0)
            at += space;
        if (at >= size)
            break;
        size_t start = at;
        while (at < size && space_at(text + at, size - at, unicode) == 0)
            at++;
        read++;
        if (add_token(f, count, text + start, at - start) < 0)
            return -1;
        if (at - start == EOS_SIZE && memcmp(text + start, EOS, EOS_SIZE) == 0)
            return read;
    }
    return add_token(f, count, EOS, EOS_SIZE) < 0 ? -1 : read;
}

/* Each token's cache slot: the cache emptied first if the line's words might not fit, the
 * cached ones looked up with their loads overlapped, the others computed */
static int token_slots(Features *f, size_t count, Py_ssize_t capacity) {
    size_t bytes = 0;
    if ((Py_ssize_t)(f->cached + count) > capacity && f->cached > 0)
        cache_clear(f);
    for (size_t i = 0; i < count; i++)
        bytes += f->tokens[i].size;
    if (cache_reserve(f, count, bytes) < 0)
        return -1;
    for (size_t i = 0; i < count; i++)
        f->tokens[i].slot = cache_probe(f, f->tokens + i);
    for (size_t i = 0; i < count; i++) {
        Token *token = f->tokens + i;
        if (token->slot == EMPTY || !same_word(f, token->slot, token))
            token->slot = word_slot(f, token);
        if (token->slot < 0)
            return -1;
    }
    return 0;
}

/* fastText's addWordNgrams: the rows of 2..wordNgrams consecutive tokens' chained hashes */
static int64_t add_word_ngrams(Features *f, size_t count, float *hidden) {
    const uint32_t *hashes = f->line_hashes;
    size_t ngrams = 0;
    if (reserve((void **)&f->ngrams, &f->ngrams_allocated, sizeof(int64_t),
                count * (size_t)(f->word_ngrams - 1)) < 0)
        return -1;
    for (size_t i = 0; i < count; i++) {
        uint64_t hash = (uint64_t)(int64_t)(int32_t)hashes[i];
        for (size_t j = i + 1; j < count && j < i + (size_t)f->word_ngrams; j++) {
            hash = hash * WORD_NGRAM_FACTOR + (uint64_t)(int64_t)(int32_t)hashes[j];
            f->ngrams[ngrams++] = (int64_t)(hash % f->bucket);
        }
    }
    return add_buckets(f, ngrams, hidden);
}

/* One line: its mean row in `hidden`, its rows' and its tokens' number */
SUMS_ROWS static int line_features(Features *f, const unsigned char *text, size_t size, int unicode,
                         Py_ssize_t capacity, float *hidden, int64_t *rows, int64_t *read) {
    size_t count, words = 0;
    int64_t total = 0;
    *read = tokenize(f, text, size, unicode, &count);
    if (*read < 0 || token_slots(f, count, capacity) < 0
            || reserve((void **)&f->line_hashes, &f->line_hashes_allocated, sizeof(uint32_t),
                       count) < 0)
        return -1;
    memset(hidden, 0, sizeof(float) * f->dim);
    for (size_t i = 0; i < count; i++) {
        const Slot *slot = f->slots + f->tokens[i].slot;
        if (slot->label)
            continue;  /* no rows, no word n-grams */
        if (slot->count) {
            add_row(f, hidden, f->sums + (size_t)f->tokens[i].slot * f->dim);
            total += slot->count;
        }
        f->line_hashes[words++] = slot->hash;
    }
    if (f->word_ngrams > 1 && f->bucket > 0) {
        int64_t ngrams = add_word_ngrams(f, words, hidden);
        if (ngrams < 0)
            return -1;
        total += ngrams;
    }
    if (total > 0) {
        float scale = (float)(1.0 / (double)total);
        for (int i = 0; i < f->dim; i++)
            hidden[i] *= scale;
    }
    *rows = total;
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

/* `object` as a C-contiguous float32 matrix with columns in `view` (`flags`: PyBUF_WRITABLE, or
 * 0); else a ValueError saying `expected` */
static int float_matrix(PyObject *object, Py_buffer *view, int flags, const char *expected) {
    if (PyObject_GetBuffer(object, view, flags | PyBUF_C_CONTIGUOUS | PyBUF_ND | PyBUF_FORMAT) < 0)
        return -1;
    if (view->ndim != 2 || strcmp(view->format, "f") != 0 || view->shape[1] <= 0) {
        PyErr_SetString(PyExc_ValueError, expected);
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
    failed = batch_features(f, text.buf, (size_t)text.len, lines, unicode != 0, hidden.buf,
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
    free(f->dictionary.entries);
    free(f->bucket_rows);
    free(f->slots);
    free(f->sums);
    free(f->keys);
    free(f->cache.entries);
    free(f->tokens);
    free(f->line_hashes);
    free(f->ngrams);
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
    const int64_t *buckets = kept.buf;
    for (Py_ssize_t i = 0; status == 0 && i < count; i++)
        if (values[i] < 0 || values[i] >= f->nrows || values[i] >= INT32_MAX || buckets[i] < 0
                || buckets[i] >= (int64_t)f->bucket) {
            PyErr_SetString(PyExc_ValueError, "a kept bucket or its row out of range");
            status = -1;
        }
    if (status == 0) {
        if (buckets_init(f, buckets, values, count) < 0) {
            PyErr_NoMemory();
            status = -1;
        }
    }
    PyBuffer_Release(&kept);
    PyBuffer_Release(&rows);
    return status;
}

/* The input matrix: float32 [rows, dim] */
static int Features_matrix(Features *f, PyObject *input) {
    static const char expected[] = "input: a float32 matrix [rows, dim]";
    if (float_matrix(input, &f->input, 0, expected) < 0)
        return -1;
    if (f->input.shape[1] > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, expected);
        return -1;
    }
    f->rows = f->input.buf;
    f->nrows = f->input.shape[0];
    f->dim = (int)f->input.shape[1];
    return 0;
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
    if (Features_matrix(f, input) < 0)
        goto done;
    if (bucket < 0 || words < 0 || words > f->nrows) {
        PyErr_SetString(PyExc_ValueError, "bucket or words out of range");
        goto done;
    }
    f->bucket = (uint32_t)bucket;
    f->bucket_inverse = bucket > 0 ? UINT64_MAX / (uint64_t)bucket + 1 : 0;
    f->nwords = words;
    f->capacity = capacity;
    if (dictionary_init(f, entries.buf, entries.len) < 0 || table_init(&f->cache, 8) < 0) {
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

/* ---- a product-quantised matrix decoded ---- */

/* decode(codes, centroids, rows, subquantisers, dsub, out): each row of a product-quantised
 * matrix (uint8 codes [rows, subquantisers]; float32 centroids [dim * 256], each sub-vector's
 * 256 in turn; sub-vectors of dsub values, the last of what is left) as its centroids side by
 * side, into float32 `out` [rows, dim] (fastText's productquantizer.cc) */
static PyObject *decode(PyObject *module, PyObject *args) {
    Py_buffer codes, centroids, out;
    Py_ssize_t rows;
    int subquantisers, dsub;
    if (!PyArg_ParseTuple(args, "y*y*niiw*", &codes, &centroids, &rows, &subquantisers, &dsub,
                          &out))
        return NULL;
    Py_ssize_t dim = centroids.len / (Py_ssize_t)(sizeof(float) * 256);
    Py_ssize_t last = dim - (Py_ssize_t)dsub * (subquantisers - 1);
    int valid = rows >= 0 && subquantisers > 0 && dsub > 0 && last > 0
        && centroids.len == dim * (Py_ssize_t)(sizeof(float) * 256)
        && codes.len == rows * subquantisers && out.len == rows * dim * (Py_ssize_t)sizeof(float);
    if (valid) {
        const uint8_t *code = codes.buf;
        const float *table = centroids.buf;
        const float *last_table = table + (size_t)(subquantisers - 1) * 256 * dsub;
        float *row = out.buf;
        for (Py_ssize_t r = 0; r < rows; r++, code += subquantisers, row += dim) {
            for (int m = 0; m < subquantisers - 1; m++) {
                const float *centroid = table + ((size_t)m * 256 + code[m]) * dsub;
                for (int n = 0; n < dsub; n++)
                    row[m * dsub + n] = centroid[n];
            }
            const float *centroid = last_table + (size_t)code[subquantisers - 1] * last;
            for (Py_ssize_t n = 0; n < last; n++)
                row[dim - last + n] = centroid[n];
        }
    }
    PyBuffer_Release(&codes);
    PyBuffer_Release(&centroids);
    PyBuffer_Release(&out);
    if (!valid)
        return PyErr_Format(PyExc_ValueError, "decode: not a product quantiser's codes");
    Py_RETURN_NONE;
}

/* ---- the softmax's exponentials ---- */

#define LANES 8  /* the partial sums of a row, for the compiler's vector registers */

#define MINUS_87 0xC2AE0000u  /* -87.0f's bits: e^-87 is about FLT_MIN */

/* e^x for x <= 0 (2^n e^r, n = x / ln 2 rounded, |r| <= ln 2 / 2, e^r by its Taylor series
 * to r^7: a relative error under 1e-7), e^-87 below -87; branch-free, so that compilers
 * vectorise it: x is clamped by its bits (of two negative floats, the larger magnitude has
 * the larger bits as an unsigned integer), not by a float comparison */
static inline float exp_nonpositive(float x) {
    uint32_t bits;
    memcpy(&bits, &x, sizeof(bits));
    bits = bits < MINUS_87 ? bits : MINUS_87;
    memcpy(&x, &bits, sizeof(x));
    float n = (float)(int)(x * 1.44269504088896341f - 0.5f);
    float r = x - n * 0.693145751953125f - n * 1.428606765330187045e-06f;
    float e = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (
        1.0f / 120 + r * (1.0f / 720 + r * (1.0f / 5040)))))));
    int32_t exponent = ((int32_t)n + 127) << 23;
    float scale;
    memcpy(&scale, &exponent, sizeof(scale));
    return e * scale;
}

/* Each row of `logits` replaced by e^(logit - the row's largest, given), its sum in `sums` */
SUMS_ROWS static void exp_rows(float *logits, const float *largest, Py_ssize_t lines,
                               Py_ssize_t labels, float *sums) {
    Py_ssize_t whole = labels - labels % LANES;
    for (Py_ssize_t line = 0; line < lines; line++) {
        float *row = logits + line * labels, top = largest[line], partial[LANES] = {0};
        float sum = 0.0f;
        for (Py_ssize_t i = 0; i < labels; i++)
            row[i] = exp_nonpositive(row[i] - top);
        for (Py_ssize_t i = 0; i < whole; i += LANES)
            for (int lane = 0; lane < LANES; lane++)
                partial[lane] += row[i + lane];
        for (Py_ssize_t i = whole; i < labels; i++)
            sum += row[i];
        for (int lane = 0; lane < LANES; lane++)
            sum += partial[lane];
        sums[line] = sum;
    }
}

/* softmax_exp(logits, largest, sums): each row of float32 logits [lines, labels] replaced by
 * e^(logit - its largest logit, float32 largest [lines]), and its sum written to float32 sums
 * [lines]: the exponentials of fastText's softmax, many rows at a time */
static PyObject *softmax_exp(PyObject *module, PyObject *args) {
    PyObject *logits_object, *largest_object, *sums_object;
    Py_buffer logits, largest, sums;
    if (!PyArg_ParseTuple(args, "OOO", &logits_object, &largest_object, &sums_object))
        return NULL;
    if (float_matrix(logits_object, &logits, PyBUF_WRITABLE,
                     "logits: a float32 matrix [lines, labels]") < 0)
        return NULL;
    Py_ssize_t lines = logits.shape[0], labels = logits.shape[1];
    Py_ssize_t size = lines * (Py_ssize_t)sizeof(float);
    if (writable(largest_object, &largest, size, "largest") < 0) {
        PyBuffer_Release(&logits);
        return NULL;
    }
    if (writable(sums_object, &sums, size, "sums") < 0) {
        PyBuffer_Release(&logits);
        PyBuffer_Release(&largest);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    exp_rows(logits.buf, largest.buf, lines, labels, sums.buf);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&logits);
    PyBuffer_Release(&largest);
    PyBuffer_Release(&sums);
    Py_RETURN_NONE;
}

/* ---- each line's main script ---- */

/* The code point of the UTF-8 sequence at text[0] and its length (an invalid byte: -1, 1) */
static inline int32_t code_point(const unsigned char *text, size_t left, size_t *length) {
    unsigned char c = text[0];
    int extra = c < 0x80 ? 0 : c < 0xC2 ? -1 : c < 0xE0 ? 1 : c < 0xF0 ? 2 : c < 0xF5 ? 3 : -1;
    if (extra < 0 || (size_t)extra >= left) {
        *length = 1;
        return extra == 0 ? c : -1;
    }
    int32_t point = extra == 0 ? c : c & (0x3F >> extra);
    for (int i = 1; i <= extra; i++) {
        if ((text[i] & 0xC0) != 0x80) {
            *length = 1;
            return -1;
        }
        point = (point << 6) | (text[i] & 0x3F);
    }
    *length = (size_t)extra + 1;
    return point;
}

/* Whether a token is an address, whose letters are no language: it holds "://" or "@", or
 * starts with "www." */
static int is_address(const unsigned char *token, size_t size) {
    if (size >= 4 && memcmp(token, "www.", 4) == 0)
        return 1;
    for (size_t i = 0; i < size; i++) {
        if (token[i] == '@' || (token[i] == ':' && i + 2 < size && token[i + 1] == '/'
                                && token[i + 2] == '/'))
            return 1;
    }
    return 0;
}

/* The script ids of the scripts whose letters join another's (Han with kana or Hangul), and
 * of Latin, whose letters weigh half beside another script's */
typedef struct {
    int han, kana, hangul, latin;
} Joins;

/* The main script of a line: the script of most of its letters (addresses skipped), Han
 * letters counted as kana where the line has kana (at least as many as Hangul letters), else
 * as Hangul where it has Hangul, Latin letters counted half beside letters of another script
 * (names and borrowed terms, in a script that writes less per letter than most); a tie goes
 * to the script met first; 0 without any letter */
static unsigned char main_script(const unsigned char *text, size_t size,
                                 const unsigned char *table, Joins joins, int32_t *counts) {
    unsigned char seen[256], met[256] = {0};
    int kinds = 0;
    int32_t ascii = 0;  /* ASCII letters, counted apart: no store a letter */
    unsigned char ascii_script = table['a'];
    size_t at = 0;
    while (at < size) {
        while (at < size && (text[at] == ' ' || text[at] == '\t' || text[at] == '\r'))
            at++;
        size_t start = at;
        while (at < size && text[at] != ' ' && text[at] != '\t' && text[at] != '\r')
            at++;
        if (at == start || is_address(text + start, at - start))
            continue;
        for (size_t i = start; i < at;) {
            if (text[i] < 0x80) {  /* ASCII: one byte, one load */
                if (table[text[i++]] && ascii++ == 0 && !met[ascii_script]) {
                    met[ascii_script] = 1;
                    seen[kinds++] = ascii_script;
                }
                continue;
            }
            size_t length;
            int32_t point = code_point(text + i, at - i, &length);
            i += length;
            unsigned char script = point >= 0 && point < 0x110000 ? table[point] : 0;
            if (script) {
                counts[script]++;
                if (!met[script]) {
                    met[script] = 1;
                    seen[kinds++] = script;
                }
            }
        }
    }
    counts[ascii_script] += ascii;
    if (counts[joins.han]) {
        int into = counts[joins.kana] && counts[joins.kana] >= counts[joins.hangul]
            ? joins.kana : counts[joins.hangul] ? joins.hangul : 0;
        if (into) {
            if (!met[into])
                seen[kinds++] = (unsigned char)into;
            counts[into] += counts[joins.han];
            counts[joins.han] = 0;
        }
    }
    unsigned char best = 0;
    int64_t most = 0;
    for (int i = 0; i < kinds; i++) {
        int64_t weight = seen[i] == joins.latin || kinds == 1 ? counts[seen[i]]
            : 2 * (int64_t)counts[seen[i]];
        if (weight > most) {
            best = seen[i];
            most = weight;
        }
        counts[seen[i]] = 0;  /* for the next line */
    }
    counts[joins.han] = counts[joins.kana] = counts[joins.hangul] = 0;
    counts[0] = 0;
    return best;
}

/* line_scripts(text, lines, table, out, han, kana, hangul, latin): the main script of each of
 * `lines` lines of UTF-8 `text` (separated by '\n'), as ids of `table` (uint8, one a code point
 * of Unicode, 0: not a letter), written to uint8 `out` [lines]; han, kana, hangul, latin: those
 * scripts' ids (0 where none: the ids start at 1) */
static PyObject *line_scripts(PyObject *module, PyObject *args) {
    Py_buffer text, table, out;
    Py_ssize_t lines;
    Joins joins;
    if (!PyArg_ParseTuple(args, "y*ny*w*iiii", &text, &lines, &table, &out, &joins.han,
                          &joins.kana, &joins.hangul, &joins.latin))
        return NULL;
    int bad = table.len != 0x110000 || out.len != lines || lines < 0
        || joins.han < 0 || joins.han > 255 || joins.kana < 0 || joins.kana > 255
        || joins.hangul < 0 || joins.hangul > 255 || joins.latin < 0 || joins.latin > 255;
    if (!bad) {
        const unsigned char *bytes = text.buf;
        size_t size = (size_t)text.len, at = 0;
        unsigned char *scripts = out.buf;
        int32_t counts[256] = {0};  /* each script's letters in the line, zeroed after it */
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t line = 0; line < lines; line++) {
            const unsigned char *end = at < size ? memchr(bytes + at, '\n', size - at) : NULL;
            size_t stop = end ? (size_t)(end - bytes) : size;
            scripts[line] = at < stop ? main_script(bytes + at, stop - at, table.buf, joins,
                                                        counts) : 0;
            at = stop + 1;
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&text);
    PyBuffer_Release(&table);
    PyBuffer_Release(&out);
    if (bad)
        return PyErr_Format(PyExc_ValueError, "line_scripts: a table of 0x110000 script ids, "
                            "an output of one byte a line and script ids under 256");
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"decode", decode, METH_VARARGS,
     "decode(codes, centroids, rows, subquantisers, dsub, out): a product-quantised matrix"},
    {"softmax_exp", softmax_exp, METH_VARARGS,
     "softmax_exp(logits, largest, sums): each row as e^(logit - its largest), and its sum"},
    {"line_scripts", line_scripts, METH_VARARGS,
     "line_scripts(text, lines, table, out, han, kana, hangul, latin): each line's main script"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef features_module = {
    PyModuleDef_HEAD_INIT, "_features",
    "fastText's per-line features (hidden vectors) for laser's language-ID predictor", -1,
    module_methods,
};

PyMODINIT_FUNC PyInit__features(void) {
    byte_kinds_init();
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
