//! Binding scalar function calls: arity and argument types checked, the result type
//! decided, constant regular expressions compiled once.

use super::func::ScalarFn;
use super::typing::{arith_type, common_type, Bound};
use super::{ArithOp, Expr};
use crate::error::{Result, SqlError};
use crate::types::DataType;
use crate::value::Value;

fn arity(name: &str, args: &[Bound], min: usize, max: usize) -> Result<()> {
    if args.len() < min || args.len() > max {
        return Err(SqlError::validation(format!(
            "Invalid number of arguments to function '{name}'. Was expecting {} arguments",
            if min == max {
                min.to_string()
            } else {
                format!("{min} to {max}")
            }
        )));
    }
    Ok(())
}

fn expect(name: &str, arg: &Bound, ok: bool, want: &str) -> Result<()> {
    if ok || arg.ty == DataType::Null {
        Ok(())
    } else {
        Err(SqlError::validation(format!(
            "Cannot apply '{name}' to arguments of type '{name}(<{}>)'. Supported form(s): '{name}(<{want}>)'",
            arg.ty
        )))
    }
}

fn strings(name: &str, args: &[Bound]) -> Result<()> {
    for a in args {
        expect(name, a, a.ty.is_string(), "STRING")?;
    }
    Ok(())
}

fn call_of(f: ScalarFn, args: Vec<Bound>, ty: DataType) -> Result<Bound> {
    Ok(Bound {
        expr: Expr::Call(f, args.into_iter().map(|a| a.expr).collect()),
        ty,
    })
}

/// Binds the call of the scalar function `name` (upper case) with bound `args`.
pub fn call(name: &str, args: Vec<Bound>) -> Result<Bound> {
    let s = DataType::STRING;
    match name {
        "UPPER" | "LOWER" | "CHAR_LENGTH" | "CHARACTER_LENGTH" => {
            arity(name, &args, 1, 1)?;
            strings(name, &args)?;
            let (f, ty) = match name {
                "UPPER" => (ScalarFn::Upper, s),
                "LOWER" => (ScalarFn::Lower, s),
                _ => (ScalarFn::CharLength, DataType::Int),
            };
            call_of(f, args, ty)
        }
        "SUBSTRING" | "SUBSTR" => {
            arity(name, &args, 2, 3)?;
            call_of(ScalarFn::Substring, args, s)
        }
        "CONCAT" => {
            arity(name, &args, 1, usize::MAX)?;
            strings(name, &args)?;
            call_of(ScalarFn::Concat, args, s)
        }
        "CONCAT_WS" => {
            arity(name, &args, 2, usize::MAX)?;
            strings(name, &args)?;
            call_of(ScalarFn::ConcatWs, args, s)
        }
        "REGEXP_EXTRACT" => {
            arity(name, &args, 2, 3)?;
            strings(name, &args[..2])?;
            let compiled = match &args[1].expr {
                Expr::Literal(Value::Str(p)) => Some(
                    regex::Regex::new(p)
                        .map_err(|e| SqlError::validation(format!("Invalid regular expression '{p}': {e}")))?,
                ),
                _ => None,
            };
            call_of(ScalarFn::RegexpExtract(compiled), args, s)
        }
        "SPLIT_INDEX" => {
            arity(name, &args, 3, 3)?;
            strings(name, &args[..2])?;
            expect(name, &args[2], args[2].ty.is_integer(), "INT")?;
            call_of(ScalarFn::SplitIndex, args, s)
        }
        "ABS" => {
            arity(name, &args, 1, 1)?;
            expect(name, &args[0], args[0].ty.is_numeric(), "NUMERIC")?;
            let ty = args[0].ty;
            call_of(ScalarFn::Abs, args, ty)
        }
        "MOD" => {
            arity(name, &args, 2, 2)?;
            let ty = arith_type(ArithOp::Mod, args[0].ty, args[1].ty)
                .filter(|t| t.is_numeric())
                .ok_or_else(|| SqlError::validation(format!("Cannot apply 'MOD' to arguments of type 'MOD(<{}>, <{}>)'", args[0].ty, args[1].ty)))?;
            call_of(ScalarFn::Mod(ty), args, ty)
        }
        "ROUND" => {
            arity(name, &args, 1, 2)?;
            expect(name, &args[0], args[0].ty.is_numeric(), "NUMERIC")?;
            let digits = match args.get(1).map(|a| &a.expr) {
                Some(Expr::Literal(Value::Int(d))) => *d,
                _ => 0,
            };
            let ty = match args[0].ty {
                DataType::Decimal(p, sc) => DataType::Decimal(p, (digits.clamp(0, 38) as u8).min(sc)),
                t => t,
            };
            call_of(ScalarFn::Round(ty), args, ty)
        }
        "CEIL" | "CEILING" | "FLOOR" => {
            arity(name, &args, 1, 1)?;
            expect(name, &args[0], args[0].ty.is_numeric(), "NUMERIC")?;
            let ty = match args[0].ty {
                DataType::Decimal(p, _) => DataType::Decimal(p, 0),
                t => t,
            };
            call_of(if name == "FLOOR" { ScalarFn::Floor } else { ScalarFn::Ceil }, args, ty)
        }
        "TO_TIMESTAMP_LTZ" => {
            arity(name, &args, 1, 2)?;
            expect(name, &args[0], args[0].ty.is_numeric(), "BIGINT")?;
            let precision = match args.get(1).map(|a| &a.expr) {
                None => 3,
                Some(Expr::Literal(Value::Int(p @ (0 | 3)))) => *p as u8,
                Some(_) => {
                    return Err(SqlError::validation(
                        "The precision of TO_TIMESTAMP_LTZ must be the literal 0 (seconds) or 3 (milliseconds)",
                    ))
                }
            };
            let args = args.into_iter().take(1).collect();
            call_of(ScalarFn::ToTimestampLtz(precision), args, DataType::TimestampLtz(3))
        }
        "TO_TIMESTAMP" => {
            arity(name, &args, 1, 2)?;
            strings(name, &args)?;
            call_of(ScalarFn::ToTimestamp, args, DataType::Timestamp(3))
        }
        "DATE_FORMAT" => {
            arity(name, &args, 2, 2)?;
            expect(name, &args[0], args[0].ty.is_timestamp() || args[0].ty.is_string(), "TIMESTAMP")?;
            strings(name, &args[1..])?;
            call_of(ScalarFn::DateFormat, args, s)
        }
        "CURRENT_TIMESTAMP" | "NOW" | "LOCALTIMESTAMP" | "PROCTIME" => {
            arity(name, &args, 0, 0)?;
            let ty = if name == "LOCALTIMESTAMP" { DataType::Timestamp(3) } else { DataType::TimestampLtz(3) };
            call_of(ScalarFn::CurrentTimestamp, args, ty)
        }
        "COALESCE" | "IFNULL" => {
            arity(name, &args, 1, usize::MAX)?;
            let mut ty = DataType::Null;
            for a in &args {
                ty = common_type(ty, a.ty).ok_or_else(|| {
                    SqlError::validation(format!("Cannot infer the type of {name} from <{ty}> and <{}>", a.ty))
                })?;
            }
            call_of(ScalarFn::Coalesce, args, ty)
        }
        "IF" => {
            arity(name, &args, 3, 3)?;
            expect(name, &args[0], args[0].ty == DataType::Boolean, "BOOLEAN")?;
            let ty = common_type(args[1].ty, args[2].ty).ok_or_else(|| {
                SqlError::validation(format!("Cannot infer the type of IF from <{}> and <{}>", args[1].ty, args[2].ty))
            })?;
            let mut it = args.into_iter().map(|a| a.expr);
            let (c, t, e) = (it.next(), it.next(), it.next());
            match (c, t, e) {
                (Some(c), Some(t), Some(e)) => Ok(Bound {
                    expr: Expr::Case(vec![(c, t)], Box::new(e)),
                    ty,
                }),
                _ => Err(SqlError::validation("IF needs three arguments")),
            }
        }
        "TUMBLE" | "HOP" | "CUMULATE" | "SESSION" | "TUMBLE_START" | "TUMBLE_END" | "HOP_START" | "HOP_END"
        | "SESSION_START" | "SESSION_END" => {
            Err(SqlError::validation(format!(
                "The window function {name}(...) is only allowed in GROUP BY (or, for _START/_END, in the SELECT list of a query grouped by the window)"
            )))
        }
        "ROW_NUMBER" | "RANK" | "DENSE_RANK" => Err(SqlError::unsupported(format!("{name} (TopN and deduplication)"))),
        other => Err(SqlError::validation(format!(
            "No match found for function signature {other}({})",
            args.iter().map(|a| format!("<{}>", a.ty)).collect::<Vec<_>>().join(", ")
        ))),
    }
}
