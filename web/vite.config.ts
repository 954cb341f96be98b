import react from '@vitejs/plugin-react'
import { defineConfig } from 'vite'

// Built at install time (the root `prepare` step) into web/dist, which the Burrow process serves on its own port.
// `npm run dev -w web` proxies the API to a server started with `npm run dev` on :8010.
export default defineConfig({
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 1200,
    reportCompressedSize: false,
  },
  server: {
    proxy: { '/api': 'http://127.0.0.1:8010' },
  },
})
