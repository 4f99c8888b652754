//! Named, typed declarations of keyed state, as Flink's `StateDescriptor`s.

use std::marker::PhantomData;

macro_rules! descriptor {
    ($(#[$doc:meta])* $name:ident<$($t:ident),+>) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name<$($t),+> {
            name: String,
            _t: PhantomData<fn() -> ($($t,)+)>,
        }

        impl<$($t),+> $name<$($t),+> {
            /// A descriptor for state called `name` (unique within the operator).
            pub fn new(name: impl Into<String>) -> Self {
                Self { name: name.into(), _t: PhantomData }
            }

            /// The state's name.
            pub fn name(&self) -> &str {
                &self.name
            }
        }

        impl<$($t),+> Clone for $name<$($t),+> {
            fn clone(&self) -> Self {
                Self::new(self.name.clone())
            }
        }
    };
}

descriptor!(
    /// A single value per key and namespace.
    ValueStateDescriptor<T>
);
descriptor!(
    /// A list of values per key and namespace.
    ListStateDescriptor<T>
);
descriptor!(
    /// A map per key and namespace.
    MapStateDescriptor<UK, UV>
);
