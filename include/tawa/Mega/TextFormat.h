//===- TextFormat.h - print and parse a tGraph ------------------*- C++ -*-===//
//
// The tGraph's one text form (DESIGN.md §7; grammar in docs/MEGAKERNEL.md).
// One entity per line, '#' starts a comment:
//
//   tgraph name=NAME form=tiles|events|normalized|linear sms=N start=E end=E
//   tensor NAME shape=[d0,d1,...] role=input|activation|state
//   op ID name=NAME kind=KIND layer=L launch=aot|jit attrs={key=NUM,...}
//   task ID op=OP tile=T reads={T[b:e,...],...} writes={...}
//        wait=[E,...] trigger=[E,...]        (one line; "op=empty" for empty)
//   event ID count=N launch=[FIRST,LAST]    (launch only in the linear form)
//
// print(parse(print(g))) == print(g): the printer writes every field in a
// fixed order and the comments it adds are derived from the graph.
//
//===----------------------------------------------------------------------===//

#ifndef TAWA_MEGA_TEXTFORMAT_H
#define TAWA_MEGA_TEXTFORMAT_H

#include "tawa/Mega/TGraph.h"

#include <ostream>
#include <string>

namespace tawa::mega {

void printGraph(const TGraph &g, std::ostream &os);
std::string printGraph(const TGraph &g);

/// Parses the text form. Syntax and reference errors (an unknown tensor, an
/// id out of order) set `error` to "SOURCE: line N: message" and return false.
/// The structural invariants are the verifier's (verifyGraph).
bool parseGraph(const std::string &text, const std::string &source, TGraph &g,
                std::string &error);

} // namespace tawa::mega

#endif // TAWA_MEGA_TEXTFORMAT_H
