#include "IRPrinter.h"

#include "IRVisitor.h"

#include <map>
#include <sstream>

namespace ptxjit::ir {
namespace {

class IRPrinter : public IRVisitor {
public:
  explicit IRPrinter(std::ostream &out) : Out(out) {}

  void print(const Expr &e) {
    if (e.defined())
      e.accept(this);
    else
      Out << "(undefined)";
  }

  void print(const Stmt &s) {
    if (s.defined())
      s.accept(this);
  }

private:
  std::ostream &Out;
  int Indent = 0;

  void indent() { Out << std::string(2 * Indent, ' '); }

  // " {", the body one level in, and the closing brace.
  void braced(const Stmt &body) {
    Out << " {\n";
    ++Indent;
    print(body);
    --Indent;
    indent();
    Out << "}\n";
  }

  void binary(const Expr &a, const char *op, const Expr &b) {
    Out << "(";
    print(a);
    Out << " " << op << " ";
    print(b);
    Out << ")";
  }

  void function(const char *name, const std::vector<Expr> &args) {
    Out << name << "(";
    for (size_t i = 0; i < args.size(); ++i) {
      if (i)
        Out << ", ";
      print(args[i]);
    }
    Out << ")";
  }

  void visit(const IntImm *op) override {
    if (op->type == Int(32))
      Out << op->value;
    else
      Out << "(" << ptxjit::to_string(op->type) << ")" << op->value;
  }
  void visit(const UIntImm *op) override {
    if (op->type.is_bool())
      Out << (op->value ? "true" : "false");
    else
      Out << "(" << ptxjit::to_string(op->type) << ")" << op->value;
  }
  void visit(const FloatImm *op) override {
    std::ostringstream s;
    s.precision(op->type.bits == 64 ? 17 : 9);
    s << op->value;
    std::string text = s.str();
    if (text.find_first_of(".einf") == std::string::npos)
      text += ".0";
    Out << text << (op->type.is_bfloat() ? "bf" : op->type.bits == 32 ? "f" : op->type.bits == 16 ? "h" : "");
  }
  void visit(const Cast *op) override {
    Out << ptxjit::to_string(op->type) << "(";
    print(op->value);
    Out << ")";
  }
  void visit(const Variable *op) override { Out << op->name; }
  void visit(const Add *op) override { binary(op->a, "+", op->b); }
  void visit(const Sub *op) override { binary(op->a, "-", op->b); }
  void visit(const Mul *op) override { binary(op->a, "*", op->b); }
  void visit(const Div *op) override { binary(op->a, "/", op->b); }
  void visit(const Mod *op) override { binary(op->a, "%", op->b); }
  void visit(const Min *op) override { function("min", {op->a, op->b}); }
  void visit(const Max *op) override { function("max", {op->a, op->b}); }
  void visit(const EQ *op) override { binary(op->a, "==", op->b); }
  void visit(const NE *op) override { binary(op->a, "!=", op->b); }
  void visit(const LT *op) override { binary(op->a, "<", op->b); }
  void visit(const LE *op) override { binary(op->a, "<=", op->b); }
  void visit(const GT *op) override { binary(op->a, ">", op->b); }
  void visit(const GE *op) override { binary(op->a, ">=", op->b); }
  void visit(const And *op) override { binary(op->a, "&&", op->b); }
  void visit(const Or *op) override { binary(op->a, "||", op->b); }
  void visit(const Not *op) override {
    Out << "!";
    print(op->a);
  }
  void visit(const Select *op) override { function("select", {op->condition, op->true_value, op->false_value}); }
  void visit(const Load *op) override {
    Out << op->name << "[";
    print(op->index);
    Out << "]";
  }
  void visit(const Ramp *op) override {
    Out << "ramp(";
    print(op->base);
    Out << ", ";
    print(op->stride);
    Out << ", " << op->lanes << ")";
  }
  void visit(const Broadcast *op) override {
    Out << "x" << op->lanes << "(";
    print(op->value);
    Out << ")";
  }
  void visit(const Call *op) override {
    static const std::map<std::string, const char *> infix = {{Call::BitwiseAnd, "&"}, {Call::BitwiseOr, "|"},
                                                              {Call::BitwiseXor, "^"}, {Call::ShiftLeft, "<<"},
                                                              {Call::ShiftRight, ">>"}};
    if (op->call_type == Call::Intrinsic && op->name == Call::BitwiseNot) {
      Out << "~";
      print(op->args[0]);
    } else if (auto it = infix.find(op->name); op->call_type == Call::Intrinsic && it != infix.end()) {
      binary(op->args[0], it->second, op->args[1]);
    } else {
      function(op->name.c_str(), op->args);
      if (op->value_index != 0)
        Out << "[" << op->value_index << "]";
    }
  }
  void visit(const Let *op) override {
    Out << "(let " << op->name << " = ";
    print(op->value);
    Out << " in ";
    print(op->body);
    Out << ")";
  }

  void visit(const LetStmt *op) override {
    indent();
    Out << "let " << op->name << " = ";
    print(op->value);
    Out << "\n";
    print(op->body);
  }
  void visit(const AssertStmt *op) override {
    indent();
    Out << "assert(";
    print(op->condition);
    Out << ", \"" << op->message << "\")\n";
  }
  void visit(const ProducerConsumer *op) override {
    indent();
    Out << (op->is_producer ? "produce " : "consume ") << op->name;
    braced(op->body);
  }
  void visit(const For *op) override {
    indent();
    Out << to_string(op->for_type) << " (" << op->name << ", ";
    print(op->min);
    Out << ", ";
    print(op->extent);
    Out << ")";
    braced(op->body);
  }
  void visit(const Store *op) override {
    indent();
    Out << (op->atomic ? "atomic " : "") << op->name << "[";
    print(op->index);
    Out << "] = ";
    print(op->value);
    Out << "\n";
  }
  void visit(const Provide *op) override {
    indent();
    if (op->atomic)
      Out << "atomic ";
    function(op->name.c_str(), op->args);
    Out << " = ";
    if (op->values.size() == 1) {
      print(op->values[0]);
    } else {
      Out << "{";
      for (size_t i = 0; i < op->values.size(); ++i) {
        Out << (i ? ", " : "");
        print(op->values[i]);
      }
      Out << "}";
    }
    Out << "\n";
  }
  void visit(const Allocate *op) override {
    indent();
    static const char *memory[] = {"", " in heap", " in shared", " in registers"};
    static const char *side[] = {"", " on device", " on host and device"};
    Out << "allocate " << op->name << memory[static_cast<int>(op->memory)] << side[static_cast<int>(op->side)] << "["
        << ptxjit::to_string(op->type);
    for (const Expr &extent : op->extents) {
      Out << " * ";
      print(extent);
    }
    Out << "]\n";
    print(op->body);
    indent();
    Out << "free " << op->name << "\n";
  }
  void visit(const Realize *op) override {
    indent();
    Out << "realize " << op->name << "(";
    for (size_t i = 0; i < op->bounds.size(); ++i) {
      Out << (i ? ", [" : "[");
      print(op->bounds[i].min);
      Out << ", ";
      print(op->bounds[i].extent);
      Out << "]";
    }
    Out << ")";
    braced(op->body);
  }
  void visit(const Block *op) override {
    print(op->first);
    print(op->rest);
  }
  void visit(const IfThenElse *op) override {
    indent();
    Out << "if (";
    print(op->condition);
    Out << ")";
    if (!op->else_case.defined()) {
      braced(op->then_case);
      return;
    }
    Out << " {\n";
    ++Indent;
    print(op->then_case);
    --Indent;
    indent();
    Out << "} else";
    braced(op->else_case);
  }
  void visit(const Evaluate *op) override {
    indent();
    print(op->value);
    Out << "\n";
  }
};

} // namespace

std::string to_string(const Expr &e) {
  std::ostringstream s;
  IRPrinter(s).print(e);
  return s.str();
}

std::string to_string(const Stmt &s) {
  std::ostringstream out;
  IRPrinter(out).print(s);
  return out.str();
}

std::ostream &operator<<(std::ostream &out, const Stmt &s) { return out << to_string(s); }

} // namespace ptxjit::ir

namespace ptxjit {
std::ostream &operator<<(std::ostream &out, const Expr &e) { return out << ir::to_string(e); }
} // namespace ptxjit
