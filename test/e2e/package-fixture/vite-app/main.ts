// The app's entry: registers <pix-checkout> from the installed package, bundled by Vite.
import 'pix-checkout';
