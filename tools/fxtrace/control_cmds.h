/* tools/fxtrace/control_cmds.h - the live-control subcommands: `fxtrace ps`, `ls`, `cat`,
 * `write` (control_cmds.c) and `mount` (mount.c), against processes that serve their tracefs
 * tree on a socket (src/base/ctlproto.h, src/host/server.h). Conventions as in cli.h.
 */
#ifndef FXTRACE_TOOLS_CONTROL_CMDS_H
#define FXTRACE_TOOLS_CONTROL_CMDS_H

int cmd_ps(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_cat(int argc, char **argv);
int cmd_write(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_mount(int argc, char **argv);

#endif
