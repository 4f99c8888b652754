//! SQL data types (Flink's logical types): parsed from `sqlparser`'s types, printed as
//! Flink prints them (`INT`, `STRING`, `DECIMAL(10, 2)`, `TIMESTAMP(3)`, …).

use crate::error::{Result, SqlError};
use serde::{Deserialize, Serialize};
use sqlparser::ast::{DataType as Ast, ExactNumberInfo, TimezoneInfo};
use std::fmt;

/// The length of `STRING` (`VARCHAR(2147483647)`).
pub const MAX_LENGTH: u32 = i32::MAX as u32;

/// A SQL type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DataType {
    /// The type of the literal `NULL`.
    Null,
    /// `BOOLEAN`.
    Boolean,
    /// `TINYINT`.
    TinyInt,
    /// `SMALLINT`.
    SmallInt,
    /// `INT`.
    Int,
    /// `BIGINT`.
    BigInt,
    /// `FLOAT`.
    Float,
    /// `DOUBLE`.
    Double,
    /// `DECIMAL(precision, scale)`.
    Decimal(u8, u8),
    /// `CHAR(n)`.
    Char(u32),
    /// `VARCHAR(n)`; `STRING` is `VARCHAR(2147483647)`.
    Varchar(u32),
    /// `DATE`.
    Date,
    /// `TIME`.
    Time,
    /// `TIMESTAMP(p)`.
    Timestamp(u8),
    /// `TIMESTAMP_LTZ(p)`.
    TimestampLtz(u8),
    /// A day-time interval (`INTERVAL '5' SECOND`).
    Interval,
}

impl DataType {
    /// `STRING`.
    pub const STRING: DataType = DataType::Varchar(MAX_LENGTH);

    /// True for the integer types.
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            DataType::TinyInt | DataType::SmallInt | DataType::Int | DataType::BigInt
        )
    }

    /// True for every numeric type.
    pub fn is_numeric(self) -> bool {
        self.is_integer() || matches!(self, DataType::Float | DataType::Double | DataType::Decimal(..))
    }

    /// True for CHAR and VARCHAR.
    pub fn is_string(self) -> bool {
        matches!(self, DataType::Char(_) | DataType::Varchar(_))
    }

    /// True for TIMESTAMP and TIMESTAMP_LTZ.
    pub fn is_timestamp(self) -> bool {
        matches!(self, DataType::Timestamp(_) | DataType::TimestampLtz(_))
    }

    fn integer_rank(self) -> u8 {
        match self {
            DataType::TinyInt => 1,
            DataType::SmallInt => 2,
            DataType::Int => 3,
            _ => 4,
        }
    }

    /// The type both numeric operands are widened to, if they are numeric.
    pub fn numeric_common(a: DataType, b: DataType) -> Option<DataType> {
        use DataType::*;
        Some(match (a, b) {
            (Null, x) | (x, Null) if x.is_numeric() || x == Null => x,
            (Double, y) | (y, Double) if y.is_numeric() => Double,
            (Float, y) | (y, Float) if y.is_numeric() => Double,
            (Decimal(p1, s1), Decimal(p2, s2)) => {
                let s = s1.max(s2);
                Decimal((p1 - s1).max(p2 - s2).saturating_add(s).min(38), s)
            }
            (Decimal(p, s), i) | (i, Decimal(p, s)) if i.is_integer() => Decimal(p.max(19 + s).min(38), s),
            (x, y) if x.is_integer() && y.is_integer() => {
                if x.integer_rank() >= y.integer_rank() {
                    x
                } else {
                    y
                }
            }
            _ => return None,
        })
    }

    /// Converts a parsed type.
    pub fn from_ast(t: &Ast) -> Result<DataType> {
        let precision = |p: &Option<u64>, default: u8| p.map(|v| v.min(9) as u8).unwrap_or(default);
        Ok(match t {
            Ast::Boolean | Ast::Bool => DataType::Boolean,
            Ast::TinyInt(_) => DataType::TinyInt,
            Ast::SmallInt(_) => DataType::SmallInt,
            Ast::Int(_) | Ast::Integer(_) => DataType::Int,
            Ast::BigInt(_) => DataType::BigInt,
            Ast::Float(_) | Ast::Real => DataType::Float,
            Ast::Double(_) | Ast::DoublePrecision => DataType::Double,
            Ast::Decimal(info) | Ast::Numeric(info) | Ast::Dec(info) => match info {
                ExactNumberInfo::None => DataType::Decimal(10, 0),
                ExactNumberInfo::Precision(p) => DataType::Decimal((*p).min(38) as u8, 0),
                ExactNumberInfo::PrecisionAndScale(p, s) => {
                    let (p, s) = ((*p).min(38) as u8, (*s).max(0) as u8);
                    if s > p {
                        return Err(SqlError::validation(format!(
                            "Decimal scale must be between 0 and the precision {p} (both inclusive)."
                        )));
                    }
                    DataType::Decimal(p, s)
                }
            },
            Ast::Char(len) | Ast::Character(len) => DataType::Char(char_length(len, 1)),
            Ast::Varchar(len) | Ast::CharacterVarying(len) | Ast::CharVarying(len) => {
                DataType::Varchar(char_length(len, 1))
            }
            Ast::String(_) | Ast::Text => DataType::STRING,
            Ast::Date => DataType::Date,
            Ast::Time(..) => DataType::Time,
            Ast::Timestamp(p, TimezoneInfo::None | TimezoneInfo::WithoutTimeZone) => {
                DataType::Timestamp(precision(p, 6))
            }
            Ast::Timestamp(p, _) => DataType::TimestampLtz(precision(p, 6)),
            Ast::Custom(name, args) => {
                let n = name.to_string().to_ascii_uppercase();
                let p = args.first().and_then(|a| match a {
                    sqlparser::ast::TypeModifier::Number(n, _) => n.parse::<u8>().ok(),
                    _ => None,
                });
                match n.as_str() {
                    "TIMESTAMP_LTZ" => DataType::TimestampLtz(p.unwrap_or(6).min(9)),
                    "STRING" => DataType::STRING,
                    _ => return Err(SqlError::validation(format!("Unknown type '{t}'"))),
                }
            }
            other => return Err(SqlError::unsupported(format!("The type {other}"))),
        })
    }
}

fn char_length(len: &Option<sqlparser::ast::CharacterLength>, default: u32) -> u32 {
    match len {
        Some(sqlparser::ast::CharacterLength::IntegerLength { length, .. }) => (*length).min(MAX_LENGTH as u64) as u32,
        Some(sqlparser::ast::CharacterLength::Max) => MAX_LENGTH,
        None => default,
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataType::Null => write!(f, "NULL"),
            DataType::Boolean => write!(f, "BOOLEAN"),
            DataType::TinyInt => write!(f, "TINYINT"),
            DataType::SmallInt => write!(f, "SMALLINT"),
            DataType::Int => write!(f, "INT"),
            DataType::BigInt => write!(f, "BIGINT"),
            DataType::Float => write!(f, "FLOAT"),
            DataType::Double => write!(f, "DOUBLE"),
            DataType::Decimal(p, s) => write!(f, "DECIMAL({p}, {s})"),
            DataType::Char(n) => write!(f, "CHAR({n})"),
            DataType::Varchar(MAX_LENGTH) => write!(f, "STRING"),
            DataType::Varchar(n) => write!(f, "VARCHAR({n})"),
            DataType::Date => write!(f, "DATE"),
            DataType::Time => write!(f, "TIME(0)"),
            DataType::Timestamp(p) => write!(f, "TIMESTAMP({p})"),
            DataType::TimestampLtz(p) => write!(f, "TIMESTAMP_LTZ({p})"),
            DataType::Interval => write!(f, "INTERVAL SECOND(3)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_operands_widen_as_flink_does() {
        use DataType::*;
        assert_eq!(DataType::numeric_common(Int, BigInt), Some(BigInt));
        assert_eq!(DataType::numeric_common(Int, Decimal(10, 2)), Some(Decimal(21, 2)));
        assert_eq!(DataType::numeric_common(Decimal(10, 2), Double), Some(Double));
        assert_eq!(DataType::numeric_common(DataType::STRING, Int), None);
        assert_eq!(DataType::STRING.to_string(), "STRING");
        assert_eq!(Decimal(10, 2).to_string(), "DECIMAL(10, 2)");
    }
}
