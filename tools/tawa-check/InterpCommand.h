//===- InterpCommand.h - tawa-check interp ----------------------*- C++ -*-===//

#ifndef TAWA_TOOLS_TAWA_CHECK_INTERPCOMMAND_H
#define TAWA_TOOLS_TAWA_CHECK_INTERPCOMMAND_H

/// `tawa-check interp ARGS...` (argv after the command name); the exit status.
int interpCommand(int argc, char **argv);

#endif // TAWA_TOOLS_TAWA_CHECK_INTERPCOMMAND_H
