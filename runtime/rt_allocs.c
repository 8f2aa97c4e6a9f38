/* The program's allocations, as cuda:malloc and cuda:free saw them
 * (rt.h): a sorted array of [base, base + size) searched by bisection.
 * Allocations change rarely and lookups come from cuda: probes (under
 * the VM's lock), so one mutex is enough. A freed range leaves; a base
 * allocated again replaces its entry (the driver reuses addresses). */
#include "rt.h"

#include <stdlib.h>
#include <string.h>

static struct rt_alloc *tab;
static size_t n, cap;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The first entry whose base is above p. */
static size_t upper(uint64_t p)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (tab[mid].base <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void rt_alloc_add(uint64_t base, uint64_t size, bool managed)
{
	if (!base || !size)
		return;
	pthread_mutex_lock(&lock);
	size_t i = upper(base);
	if (i && tab[i - 1].base == base) {
		tab[i - 1] = (struct rt_alloc){ base, size, managed };
	} else {
		if (n == cap) {
			size_t c = cap ? cap * 2 : 64;
			struct rt_alloc *t = realloc(tab, c * sizeof(*t));
			if (!t) { /* lookups miss it: its actions become counted no-ops */
				pthread_mutex_unlock(&lock);
				return;
			}
			tab = t;
			cap = c;
		}
		memmove(&tab[i + 1], &tab[i], (n - i) * sizeof(*tab));
		tab[i] = (struct rt_alloc){ base, size, managed };
		n++;
	}
	pthread_mutex_unlock(&lock);
}

void rt_alloc_remove(uint64_t base)
{
	pthread_mutex_lock(&lock);
	size_t i = upper(base);
	if (i && tab[i - 1].base == base) {
		memmove(&tab[i - 1], &tab[i], (n - i) * sizeof(*tab));
		n--;
	}
	pthread_mutex_unlock(&lock);
}

bool rt_alloc_find(uint64_t p, struct rt_alloc *out)
{
	pthread_mutex_lock(&lock);
	size_t i = upper(p);
	bool hit = i && p - tab[i - 1].base < tab[i - 1].size;
	if (hit)
		*out = tab[i - 1];
	pthread_mutex_unlock(&lock);
	return hit;
}

void rt_allocs_forget(void)
{
	pthread_mutex_lock(&lock);
	n = 0;
	pthread_mutex_unlock(&lock);
}
