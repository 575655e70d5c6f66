"""Keep an index in sync with folders while it runs (`watcher.Watcher`; `ctxsearch watch`).

Changes are noticed by `watchfiles` (inotify on Linux), grouped until the folder has been
quiet for a moment, then indexed by the same incremental run as `Indexer.index_folder`,
so every guarantee of a run holds (atomic publication, per-file failures, the writer
lock).

A watch follows a folder, not the directory it was when the watch began: inotify loses
a folder that is deleted (`rm -rf docs && make docs`) or swapped for another (`mv`), so
each folder's identity (device and inode) is looked at before a watcher is armed, and
again after every batch of changes and once a second while nothing happens. A folder
that is gone is indexed as empty (its files leave the index) and looked for until it is
back; one that came back, or was swapped, is indexed and watched again. A folder given
as a link is watched as the link: when the link is swapped for one to another folder
(`ln -sfn releases/v2 current.tmp && mv -T current.tmp current`), the folder it leads
to is another, and is indexed (under the same root) and watched.

A link to a file outside its root is indexed only where the root's rules follow such
links (`index --follow-links-outside`); the watcher does not see the files they lead
to, so those are looked at (size, mtime, ctime, inode) after every batch and once a
second, and a change there brings a run of the root (`link_targets`).

watchfiles cannot pass on a name that is not UTF-8: its watcher stops with an error when
it arms over a folder of such a name, and at any event on such a file, a read included
(so a file that fails to index, read again by each run, would stop it again and again).
While such a name lies under a watched folder, the watch polls instead: every second it
walks the folders, links not followed (so a link in a loop cannot trap it), and compares
each file's size, mtime, ctime and inode (`polling`), which sees writes, not reads.
"""
