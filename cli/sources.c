/* Reading .gpx files (sources.h). */
#include "sources.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sources_read(const char *const *paths, int nfiles, char **text, size_t *len,
		 struct source_file *files)
{
	*text = NULL;
	*len = 0;
	int line = 1;
	for (int i = 0; i < nfiles; i++) {
		const char *path = paths[i];
		size_t n;
		char *t = source_read_file(path, &n);
		char *all = t ? realloc(*text, *len + n + 2) : NULL;
		if (!all) {
			fprintf(stderr, "gpux: ERROR: failed to open file '%s': %s\n", path,
				t ? "out of memory" : strerror(errno));
			free(t);
			free(*text);
			*text = NULL;
			return -1;
		}
		*text = all;
		if (i && n >= 2 && t[0] == '#' && t[1] == '!')
			t[0] = t[1] = '/';
		files[i] = (struct source_file){ strcmp(path, "-") ? path : "stdin", line };
		memcpy(all + *len, t, n);
		*len += n;
		if (!n || t[n - 1] != '\n')
			all[(*len)++] = '\n';
		all[*len] = 0;
		for (size_t k = 0; k < n; k++)
			line += t[k] == '\n';
		line += !n || t[n - 1] != '\n';
		free(t);
	}
	return 0;
}
