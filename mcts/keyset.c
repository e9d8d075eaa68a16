/* Open-addressing hash map over byte keys (FNV-1a), growing at half load. Keys are copied. */
#include "mcts/keyset.h"

#include "common/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct slot {
    uint8_t *key; /* NULL = empty */
    size_t len;
    uint64_t hash;
    int64_t value;
};

struct mcts_keyset {
    struct slot *slots;
    size_t cap, count;
};

static uint64_t fnv1a(const uint8_t *key, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ key[i]) * 1099511628211ull;
    return h;
}

struct mcts_keyset *mcts_keyset_new(void)
{
    struct mcts_keyset *ks = xcalloc(1, sizeof(*ks));
    ks->cap = 64;
    ks->slots = xcalloc(ks->cap, sizeof(*ks->slots));
    return ks;
}

void mcts_keyset_free(struct mcts_keyset *ks)
{
    if (!ks)
        return;
    for (size_t i = 0; i < ks->cap; i++)
        free(ks->slots[i].key);
    free(ks->slots);
    free(ks);
}

static struct slot *find(const struct mcts_keyset *ks, const uint8_t *key, size_t len,
                         uint64_t h)
{
    for (size_t i = h & (ks->cap - 1);; i = (i + 1) & (ks->cap - 1)) {
        struct slot *s = &ks->slots[i];
        if (!s->key || (s->hash == h && s->len == len && !memcmp(s->key, key, len)))
            return s;
    }
}

static void grow(struct mcts_keyset *ks)
{
    struct slot *old = ks->slots;
    size_t old_cap = ks->cap;
    ks->cap *= 2;
    ks->slots = xcalloc(ks->cap, sizeof(*ks->slots));
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].key)
            *find(ks, old[i].key, old[i].len, old[i].hash) = old[i];
    free(old);
}

int64_t mcts_keyset_get(const struct mcts_keyset *ks, const uint8_t *key, size_t len)
{
    const struct slot *s = find(ks, key, len, fnv1a(key, len));
    return s->key ? s->value : -1;
}

int mcts_keyset_put(struct mcts_keyset *ks, const uint8_t *key, size_t len, int64_t value)
{
    if (2 * (ks->count + 1) > ks->cap)
        grow(ks);
    uint64_t h = fnv1a(key, len);
    struct slot *s = find(ks, key, len, h);
    if (s->key)
        return 0;
    s->key = xmalloc(len ? len : 1);
    memcpy(s->key, key, len);
    s->len = len;
    s->hash = h;
    s->value = value;
    ks->count++;
    return 1;
}

size_t mcts_keyset_count(const struct mcts_keyset *ks)
{
    return ks->count;
}
