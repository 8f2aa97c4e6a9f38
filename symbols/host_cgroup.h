/* Cgroups by id, as the kernel's cgroup helpers give them: the id of a
 * cgroup's directory (cgroupid()) and, the other way, the directories
 * of an id in each mounted hierarchy (cgroup_path()). */
#ifndef GPUX_HOST_CGROUP_H
#define GPUX_HOST_CGROUP_H

#include <stdint.h>

/* The id of the cgroup at path (its file handle, an inode number). 0,
 * or an errno. */
int host_cgroup_id(const char *path, uint64_t *id);

/* "unified:/a/b,cpu:/c": id's directory, from the hierarchy's root, in
 * each mounted hierarchy that has it (cgroup v2's named unified, and
 * first; v1's by the name of their mount point, in order), as bpftrace
 * 0.17 prints cgroup_path(); only hierarchies whose name matches glob
 * when glob is not NULL. malloc'd; "" where none has it; NULL where
 * memory ran out. */
char *host_cgroup_path(uint64_t id, const char *glob);

#endif
